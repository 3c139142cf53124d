/** A REST request refused before any route ran: its status and the `{ message }` saying what to fix. */
export class RestRequestError extends Error {
  override readonly name = "RestRequestError";

  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
