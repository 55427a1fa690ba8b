import { InvalidArgumentError } from 'commander';

/**
 * The parser of an option (or config setting) that takes a whole number
 * from `min` to `max`: decimal digits only (no sign, exponent or fraction),
 * refused otherwise in one line naming the option and the value.
 */
export function integerIn(name: string, min: number, max: number): (value: string) => number {
  return (value: string): number => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < min || number > max) {
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`);
    }
    return number;
  };
}
