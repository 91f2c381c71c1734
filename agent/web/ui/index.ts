/**
 * @module Public surface of the status page (agent/web/ui): the router that serves it, the
 * helper that puts it in front of the management API app, the optional `/api/v1/status`
 * document its service panels read, and the pure models (diagnosis, timeline) for reuse in
 * the CLI or tests.
 */
export { createStatusPage, defaultBundleDir, statusReportHandler, withStatusPage, type StatusPageOptions } from './status-page.js';
export { CONTENT_SECURITY_POLICY, SECURITY_HEADERS, escapeHtml, renderPageShell } from './page-shell.js';
export type {
  AgentStatusReport,
  BmcReachability,
  DhcpServiceStatus,
  ImageDownloadStatus,
  RamdiskBuildReport,
  SshStatus,
  TransferServiceStatus,
} from './status-report.js';
export { DEFAULT_THRESHOLDS, DIAGNOSIS_RULES, diagnoseHost, type DiagnosisInput, type DiagnosisThresholds, type Finding, type Severity } from './diagnosis.js';
export { TIMELINE_LANES, buildTimeline, laneOf, type LaneId, type TimelineModel } from './timeline.js';
