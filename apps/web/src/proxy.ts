import { type NextRequest, NextResponse } from "next/server";
import { serverEnv } from "./env";
import { contentSecurityPolicy } from "./security-headers";

/**
 * Sets the CSP per request: its connect-src lists the API origins from API_URLS, which are read at request
 * time (one build serves any port layout), so it cannot live in next.config's build-time headers. The
 * static headers (nosniff, Referrer-Policy, X-Frame-Options) are in next.config.ts.
 */
export function proxy(_req: NextRequest) {
  const res = NextResponse.next();
  const dev = process.env.NODE_ENV !== "production";
  res.headers.set("content-security-policy", contentSecurityPolicy(serverEnv().API_URLS, dev));
  return res;
}

export const config = {
  matcher: ["/((?!_next/static|_next/image|favicon.ico|icon.svg).*)"],
};
