
return admit_one(0, 0)
