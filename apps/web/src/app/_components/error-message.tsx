import { describeError } from "~/lib/errors";

export function ErrorMessage({ error, testId }: { error: unknown; testId?: string }) {
  if (error === null || error === undefined) return null;
  const { code, text } = describeError(error);
  return (
    <p className="error" role="alert" data-testid={testId} data-code={code}>
      <strong>{code}</strong> {text}
    </p>
  );
}
