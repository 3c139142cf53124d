import type { TRPCRouterRecord } from "@trpc/server";
import { z } from "zod";
import { systemInfo } from "../system/info.js";
import { isAdmin, publicProcedure } from "../trpc.js";

export const systemRouter = {
  // No input: declared, so a malformed `?input=` is a 400 rather than silently ignored.
  info: publicProcedure.input(z.undefined()).query(({ ctx }) => systemInfo(ctx, isAdmin(ctx))),
} satisfies TRPCRouterRecord;
