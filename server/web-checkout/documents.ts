// Brazilian document numbers: a CPF (individuals, 11 digits) or a CNPJ (companies, 14 digits), each
// with two check digits computed modulo 11. Digits only, as the contract asks.

/** A check digit of the weighted sum: 11 − (sum mod 11), 0 when that is 10 or 11. */
function checkDigit(digits: number[], weights: number[]): number {
  const sum = digits.reduce((total, digit, i) => total + digit * weights[i]!, 0);
  const rest = 11 - (sum % 11);
  return rest >= 10 ? 0 : rest;
}

/** Same digit repeated (000…, 111…) passes the arithmetic but is never issued. */
const repeated = (value: string) => /^(\d)\1*$/.test(value);

export function isValidCpf(value: string): boolean {
  if (!/^\d{11}$/.test(value) || repeated(value)) return false;
  const digits = [...value].map(Number);
  const first = checkDigit(digits.slice(0, 9), [10, 9, 8, 7, 6, 5, 4, 3, 2]);
  const second = checkDigit(digits.slice(0, 10), [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
  return first === digits[9] && second === digits[10];
}

export function isValidCnpj(value: string): boolean {
  if (!/^\d{14}$/.test(value) || repeated(value)) return false;
  const digits = [...value].map(Number);
  const first = checkDigit(digits.slice(0, 12), [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  const second = checkDigit(digits.slice(0, 13), [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return first === digits[12] && second === digits[13];
}
