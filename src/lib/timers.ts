/**
 * The longest delay Node's timers take, in ms (2^31 - 1, about 24.8 days): a longer one fires at once, after a
 * TimeoutOverflowWarning. Every setting that is a time has it as its maximum (schemas/config.json); the waits that
 * add times up (a profile's gaps, say) are cut to a time limit below it, and the timers themselves never ask for more.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
