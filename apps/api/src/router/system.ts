import type { TRPCRouterRecord } from "@trpc/server";
import { systemInfo } from "../system/info.js";
import { isAdmin, publicProcedure } from "../trpc.js";

export const systemRouter = {
  info: publicProcedure.query(({ ctx }) => systemInfo(ctx, isAdmin(ctx))),
} satisfies TRPCRouterRecord;
