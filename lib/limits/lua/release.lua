
return release_one(0, 0, #KEYS)
