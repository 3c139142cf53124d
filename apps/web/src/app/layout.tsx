import "@lockyard/ui/styles.css";
import "./globals.css";
import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
import { serverEnv } from "~/env";
import { TRPCReactProvider } from "~/trpc/react";

// API_URLS is read per request, so the same build works whichever ports the API listens on.
export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: "Lockyard",
  description: "Distributed locks on Redis: live locks, a flash sale, double submits and failure scenarios.",
};

export const viewport: Viewport = { width: "device-width", initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  const { API_URLS } = serverEnv();
  return (
    <html lang="en">
      <body>
        <TRPCReactProvider apiUrls={API_URLS}>{children}</TRPCReactProvider>
      </body>
    </html>
  );
}
