/** The code of the process warning below, for `process.on("warning")` listeners. */
export const CHANNEL_DENIED_WARNING = "LOCKYARD_CHANNEL_DENIED";

/** Redis refused a channel to the connection's ACL user: `NOPERM … channel …` (SUBSCRIBE, SSUBSCRIBE). */
export function isChannelDenied(err: unknown): boolean {
  return err instanceof Error && /^NOPERM\b/.test(err.message) && /channel/i.test(err.message);
}

/**
 * The channel pattern that grants a release channel and every other of its kind: the channel up to its
 * `{resource}` part, plus `*` (`lock-released:{r}` → `lock-released:*`).
 */
export function channelPattern(channel: string): string {
  const brace = channel.indexOf("{");
  return `${brace === -1 ? channel : channel.slice(0, brace)}*`;
}

/**
 * Says once, as a process warning, that Redis refuses this subscriber's ACL user the lock's release channels.
 * Locks still work without them, but silently worse: waiters are not woken by releases and look on their timers
 * (retry.maxMs), and the release scripts' messages are dropped (they skip a PUBLISH Redis denies rather than fail).
 */
export function channelDeniedWarner(): (channel: string, err: unknown) => void {
  let warned = false;
  return (channel, err) => {
    if (warned || !isChannelDenied(err)) return;
    warned = true;
    const pattern = channelPattern(channel);
    process.emitWarning(
      `Redis refused SUBSCRIBE to ${channel} (${(err as Error).message}): this Redis user has no rights on the ` +
        `lock's release channels. Locks still work, but waiters are not woken by releases and look on their ` +
        `timers instead (retry.maxMs), and releases are not announced. Grant the channels, e.g. ` +
        `ACL SETUSER <user> &${pattern} (see "Running as a restricted ACL user" in the README).`,
      { code: CHANNEL_DENIED_WARNING },
    );
  };
}
