import { DashboardHeader } from "./_components/dashboard-header";
import { FlashSalePanel } from "./_components/flash-sale-panel";
import { JobsPanel } from "./_components/jobs-panel";
import { LiveLocksProvider } from "./_components/live-locks";
import { LocksPanel } from "./_components/locks-panel";
import { OrdersPanel } from "./_components/orders-panel";
import { ScenariosPanel } from "./_components/scenarios-panel";

export default function Home() {
  return (
    <LiveLocksProvider>
      <DashboardHeader />
      <main className="grid">
        <div className="col-wide">
          <FlashSalePanel />
        </div>
        <div className="col-side">
          <LocksPanel />
          <JobsPanel />
        </div>
        <div className="col-full">
          <ScenariosPanel />
        </div>
        <div className="col-full">
          <OrdersPanel />
        </div>
      </main>
    </LiveLocksProvider>
  );
}
