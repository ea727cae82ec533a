export { type AppStore, type Notice, notices, openAppStore, type Release, releases } from './app-store.js';
export {
  FLOWS,
  type FlowOptions,
  type FlowOutput,
  runEventTriggered,
  runSafeStop,
  runScheduled,
  runStateCheck,
  runStatusTracking,
} from './flows.js';
export { defineNoticeTask, NOTICE_TASK, type NoticeQuery, noticeProblem, noticePrompt } from './notice-task.js';
export {
  type Application,
  createTaskDirectory,
  type FlowName,
  type InboxEvent,
  MAX_EVENT_BYTES,
  openTaskDirectory,
  paths,
  readInboxEvent,
  writeInboxEvent,
  writeJsonAtomic,
} from './task-directory.js';
