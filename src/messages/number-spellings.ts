// The other spellings WhatsApp treats as the same account: Brazil's mobile ninth digit, Mexico's `1`, Argentina's `9`.

/** The other spellings of a phone number's digits (none for most countries). */
export function otherSpellings(digits: string): string[] {
  const forms: string[] = [];
  if (digits.startsWith('55')) {
    if (digits.length === 13 && digits[4] === '9') forms.push(digits.slice(0, 4) + digits.slice(5));
    if (digits.length === 12) forms.push(`${digits.slice(0, 4)}9${digits.slice(4)}`);
  } else if (digits.startsWith('52') || digits.startsWith('54')) {
    const extra = digits.startsWith('52') ? '1' : '9';
    if (digits.length === 13 && digits[2] === extra) forms.push(digits.slice(0, 2) + digits.slice(3));
    if (digits.length === 12) forms.push(`${digits.slice(0, 2)}${extra}${digits.slice(2)}`);
  }
  return forms;
}
