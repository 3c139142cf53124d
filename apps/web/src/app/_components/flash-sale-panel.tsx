"use client";

import { Panel } from "@lockyard/ui/panel";
import { ProgressBar } from "@lockyard/ui/progress-bar";
import { BurstForm } from "./burst-form";
import { BurstHistory } from "./burst-history";
import { BurstReportView } from "./burst-report";
import { BurstStatus } from "./burst-status";
import { ErrorMessage } from "./error-message";
import { useLiveConnection } from "./live-locks";
import { StockChart } from "./stock-chart";
import { useBurst } from "./use-burst";
import { useSystemInfo } from "./use-system-info";

export function FlashSalePanel() {
  const info = useSystemInfo();
  const { state, history, start } = useBurst();
  const running = state.status === "running";
  const offline = useLiveConnection().state === "offline";
  return (
    <Panel
      id="flash-sale"
      testId="panel-flash-sale"
      title="Flash sale"
      subtitle="Fire concurrent purchases at both API instances and watch whether stock goes below zero."
    >
      <BurstForm
        running={running}
        blockedReason={
          offline && !running ? "Both API instances are unreachable: Start returns when one answers." : null
        }
        modes={info.data?.modes}
        onStart={start}
      />
      {state.progress ? (
        <div className="burst-live" data-testid="burst-live" data-status={state.status}>
          <ProgressBar
            value={state.progress.done}
            max={state.progress.total}
            label="Requests done"
            testId="burst-progress"
          />
          <StockChart series={state.series} finished={state.status === "done"} />
        </div>
      ) : null}
      <ErrorMessage error={state.error} testId="burst-error" />
      <BurstStatus running={running} progress={state.progress} report={state.report} />
      {state.report ? <BurstReportView report={state.report} /> : null}
      <BurstHistory runs={history} />
    </Panel>
  );
}
