// The one rule for services a test needs (PostgreSQL, RabbitMQ, NATS): absent, a loud skip; under REQUIRE_SERVICES=1, a failure.

const servicesRequired = process.env.REQUIRE_SERVICES === '1';

/** Null when `probe` succeeds, else the message of what it threw. */
export async function problemOf(probe: () => Promise<unknown>): Promise<string | null> {
  try {
    await probe();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Whether a service the tests need answered (`problem` null). When it did not: throws under REQUIRE_SERVICES=1,
 * otherwise warns loudly that `skipped` is skipped and answers false.
 */
export function serviceAvailable(service: string, address: string, problem: string | null, skipped: string): boolean {
  if (problem === null) return true;
  if (servicesRequired) throw new Error(`REQUIRE_SERVICES=1 but ${service} is not reachable at ${address}: ${problem}`);
  console.warn(`\n*** ${service} not reachable at ${address} (${problem}): ${skipped} SKIPPED ***\n`);
  return false;
}
