/**
 * JSON text safe to show on a terminal, with the same value: JSON.stringify
 * escapes C0 controls but leaves DEL, C1 controls (U+009B is a one-byte
 * CSI), bidirectional controls and the line and paragraph separators as
 * they are; here they are written as `\uXXXX` escapes too, which every
 * JSON reader turns back into the same characters.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function jsonText(value: unknown, space?: number): string {
  const text = JSON.stringify(value, null, space);
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(text)) return text;
  UNSAFE.lastIndex = 0;
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
