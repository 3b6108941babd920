// Privacy values the sandbox network understands (WhatsApp's), and what they change on the network.
import { invalidInput } from '../../core/errors.js';
import { privacyValues as allowed, type Instance, type PrivacySettings } from '../../core/instance.js';

/** Throws a 400 naming every field whose value WhatsApp would refuse. */
export function checkPrivacy(settings: PrivacySettings): void {
  const problems: string[] = [];
  for (const [field, values] of Object.entries(allowed) as [keyof PrivacySettings, readonly string[]][]) {
    const value = settings[field];
    if (value !== undefined && !values.includes(value)) problems.push(`${field} must be one of: ${values.join(', ')}`);
  }
  if (problems.length > 0) throw invalidInput(...problems);
}

/** Whether the instance sends read receipts (WhatsApp: turning them off hides your reads from others). */
export function sendsReadReceipts(instance: Instance | undefined): boolean {
  return instance?.privacy?.readreceipts !== 'none';
}
