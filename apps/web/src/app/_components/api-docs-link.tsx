"use client";

import { useSyncExternalStore } from "react";
import { useEndpoints } from "~/trpc/react";

/**
 * The API's REST face: Swagger UI at `/api/docs` (it links the OpenAPI document, `/api/openapi.json`), on
 * the API instance the dashboard is using right now.
 */
export function ApiDocsLink() {
  const endpoints = useEndpoints();
  const api = useSyncExternalStore(
    (onChange) => endpoints.subscribe(onChange),
    () => endpoints.current(),
    () => endpoints.urls[0] as string,
  );
  return (
    <a
      href={`${api}/api/docs`}
      target="_blank"
      rel="noopener noreferrer"
      title={`REST API and OpenAPI document (${api}/api/openapi.json)`}
      data-testid="api-docs-link"
    >
      API docs
    </a>
  );
}
