import type { Timeline } from "../timeline.js";

export interface ScenarioResult {
  ok: boolean;
  summary: string;
}

export type ScenarioScript = (tl: Timeline) => Promise<ScenarioResult>;
