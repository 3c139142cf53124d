export type ChildRequest =
  | {
      type: "acquire";
      redisUrl: string;
      instanceId: string;
      resource: string;
      leaseMs: number;
      waitMs: number;
    }
  | { type: "write"; productId: string; delta: number };

export type ChildReply =
  | { type: "acquired"; owner: string; token: number | null; pid: number }
  | { type: "written"; ok: boolean; qty: number | null; token: number | null; stillHeld: boolean }
  | { type: "error"; message: string };
