import { pino } from "pino";

export function createLogger(level: string, instanceId: string) {
  return pino({ level, base: { instance: instanceId } });
}
