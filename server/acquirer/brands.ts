// The platform's bin table: a card brand from the first six digits, as the subscription API writes
// brands (title case). The order of the rules is the contract's (`SubscriptionRequestCard.brand`):
// Elo and Hipercard ranges overlap Visa and Maestro prefixes, so they are tested first.

export type CardBrand = 'Mastercard' | 'Visa' | 'Amex' | 'Elo' | 'Hipercard' | 'Maestro';

type Range = readonly [number, number];
const single = (bin: number): Range => [bin, bin];

/** Six-digit bin ranges, inclusive. */
const ELO: Range[] = [
  ...[401178, 401179, 431274, 438935, 451416, 457393, 457631, 457632, 504175, 627780, 636297, 636368].map(single),
  [506699, 506778], [509000, 509999], [650031, 650033], [650035, 650051], [650405, 650439], [650485, 650538],
  [650541, 650598], [650700, 650718], [650720, 650727], [650901, 650920], [651652, 651679], [655000, 655019], [655021, 655058],
];
const HIPERCARD: Range[] = [606282, 384100, 384140, 384160].map(single);

const inRanges = (bin: number, ranges: Range[]) => ranges.some(([low, high]) => bin >= low && bin <= high);
const prefix = (bin: string, digits: number) => Number(bin.slice(0, digits));

/** The brand of a six-digit bin, or undefined when the table has none. */
export function brandOfBin(bin: string): CardBrand | undefined {
  if (!/^[0-9]{6}$/.test(bin)) return undefined;
  const six = Number(bin);
  if (inRanges(six, ELO)) return 'Elo';
  if (inRanges(six, HIPERCARD)) return 'Hipercard';
  const two = prefix(bin, 2);
  const four = prefix(bin, 4);
  if (two === 34 || two === 37) return 'Amex';
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'Mastercard';
  if (bin.startsWith('4')) return 'Visa';
  if (two === 50 || (two >= 56 && two <= 69)) return 'Maestro';
  return undefined;
}
