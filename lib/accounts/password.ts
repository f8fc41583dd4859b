import bcrypt from 'bcryptjs';

const COST = 10;
// A real hash to compare against when the account does not exist, so login timing does not reveal it.
const DUMMY_HASH = bcrypt.hashSync('not-a-real-password', COST);

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, COST);
}

export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  const ok = await bcrypt.compare(password, hash ?? DUMMY_HASH);
  return ok && hash !== undefined;
}

export { passwordProblem } from '@/lib/password-rules';
