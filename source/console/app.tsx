import { Box, useApp, useInput } from "ink";
import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import { Operator, defaultActor, errorMessage, type Store } from "../../engine/index.js";
import { Footer, Header, statusLines } from "./components/chrome.js";
import { ConfirmDialog, PromptDialog, QuitDialog, dialogHeight } from "./components/dialogs.js";
import { Lines, seg, wrapWords } from "./components/lines.js";
import { ServicesContext, failureText, type Dialog, type Message, type QuitQuestion, type Services, type ViewEntry } from "./context.js";
import { ConsoleData } from "./data.js";
import type { Clipboard } from "./clipboard.js";
import type { Editor } from "./editor.js";
import { KeyRouterContext, useKeys } from "./hooks/use-keys.js";
import { useTerminalSize } from "./hooks/use-size.js";
import { ViewMemoryContext, forgetFrom, memoryFor } from "./hooks/use-remembered.js";
import { KeyRouter, PRIORITY } from "./key-router.js";
import { bindingsFor, explain, keyLabel, keyName, type Binding, type Handlers } from "./keymap.js";
import { LiveFeed } from "./live.js";
import { paletteCommand, paletteSuggestions } from "./palette.js";
import { clean } from "./text.js";
import { helpPage } from "./views/help.js";
import { InterruptsView } from "./views/interrupts-view.js";
import { OperatorPanel } from "./views/operator-panel.js";
import { RunView } from "./views/run-view.js";
import { RunsView } from "./views/runs-view.js";
import { SchedulesView } from "./views/schedules-view.js";
import { TaskView } from "./views/task-view.js";
import { TextView } from "./views/text-view.js";

export interface ConsoleProps {
  store: Store;
  /** `alice` or `operator:alice`: recorded on every command. */
  actor: string;
  readOnly: boolean;
  storeLabel: string;
  /** Names of secrets added to the default ones (see ConsoleOptions). */
  secretKeys?: readonly string[];
  editor: Editor;
  clipboard: Clipboard;
  /** The first view (default: the runs list). */
  initial?: ViewEntry;
  /** How long store events are gathered before the screen is updated. */
  coalesceMs?: number;
  /** How often the counts are read again, to notice runs deleted by another process (default 5 s). */
  recountMs?: number;
  /** How often the store is asked whether it answers (default 2 s), and how long it has to answer (default 3 s). */
  heartbeatMs?: number;
  answerMs?: number;
}

const MIN = { columns: 40, rows: 10 };
/** How long the footer shows an action's outcome: an error longer, to be read. */
const MESSAGE_MS: Record<Exclude<Message["tone"], "busy">, number> = { ok: 8_000, info: 8_000, error: 20_000 };
/**
 * Frames per second at most. Ink lays out and styles the whole screen each frame (its cost, not
 * the events', is what a busy store costs); while a worker writes hundreds of events a second this
 * bounds it, and a key press after a quiet moment still draws at once.
 */
export const FRAME_RATE = 15;

/**
 * How the console is given to Ink (`runConsole`, and the benchmark that measures it): frames
 * throttled. Only the rows that changed reach the terminal through `diffedScreen` (Ink's own
 * incremental mode draws frames shorter than the terminal a row lower each time).
 */
export const RENDER_OPTIONS = { maxFps: FRAME_RATE } as const;
/** Each dialog gets a fresh component (and so fresh focus and text), even when one replaces another at once. */
let nextDialog = 1;
let nextWork = 1;

/** The operations console: header, the view on top of the stack, a dialog if one is open, the footer. */
export function Console(props: ConsoleProps) {
  const { exit } = useApp();
  const size = useTerminalSize();
  const [stack, setStack] = useState<ViewEntry[]>([props.initial ?? { kind: "runs" }]);
  const [dialog, setDialog] = useState<Dialog>();
  const [quitQuestion, setQuitQuestion] = useState<QuitQuestion>();
  // Each message carries the number of keys pressed before it: news from before the key that moved
  // to another view is about the view that was left.
  const [shown, setShown] = useState<{ message: Message; key: number }>();
  const keysPressed = useRef(0);
  const setMessage = (update: Message | undefined | ((m: Message | undefined) => Message | undefined)) =>
    setShown((s) => {
      const message = typeof update === "function" ? update(s?.message) : update;
      return message === s?.message ? s : message && { message, key: keysPressed.current };
    });
  const message = shown?.message;
  const [feedError, setFeedError] = useState<string>();
  const closing = useRef(false);
  const memory = useRef(new Map<string, unknown>());
  // Writes being sent now, by label: quitting meanwhile would stop them part-way (a bulk decision's rest).
  const underWay = useRef(new Map<number, string>());

  const router = useMemo(() => new KeyRouter(bindingsFor(props.readOnly)), [props.readOnly]);
  const services = useMemo<Services>(() => {
    const actor = props.actor.includes(":") ? props.actor : defaultActor(props.actor);
    const feed = new LiveFeed(props.store, {
      coalesceMs: props.coalesceMs ?? 100,
      label: props.store.description,
      ...(props.heartbeatMs ? { heartbeatMs: props.heartbeatMs } : {}),
      ...(props.answerMs ? { answerMs: props.answerMs } : {}),
    });
    return {
      store: props.store,
      feed,
      data: new ConsoleData(props.store, feed, undefined, props.recountMs),
      actor,
      readOnly: props.readOnly,
      storeLabel: props.storeLabel,
      secretKeys: props.secretKeys ?? [],
      operator: props.readOnly ? null : new Operator(props.store, { actor, secretKeys: props.secretKeys ?? [] }),
      editor: props.editor,
      copy: (text) => {
        props.clipboard(text);
        setMessage({ tone: "ok", text: `copied ${text} to the clipboard` });
      },
      nav: {
        // Going to the view just below (a child's parent it was opened from, help from help) goes
        // back to it rather than stacking another copy.
        push: (view) =>
          setStack((s) => {
            if (sameView(s[s.length - 2], view)) return s.slice(0, -1);
            if (sameView(s[s.length - 1], view)) return s;
            forgetFrom(memory.current, s.length + 1);
            return [...s, view];
          }),
        pop: () => setStack((s) => (s.length > 1 ? s.slice(0, -1) : s)),
        replace: (view) => setStack((s) => (forgetFrom(memory.current, s.length), [...s.slice(0, -1), view])),
        // The runs list keeps its filter and selection; the views stacked on it are forgotten.
        home: () => setStack((forgetFrom(memory.current, 1), [{ kind: "runs" }])),
        quit: () => {
          closing.current = true;
          exit();
        },
      },
      ui: {
        report: setMessage,
        moved: () => setShown((s) => (s && s.message.tone !== "busy" && s.key < keysPressed.current ? undefined : s)),
        // A dialog is a new question: the outcome of the last action no longer stands beside it.
        confirm: (request) =>
          new Promise((resolve) => (router.holdForDialog(), setMessage((m) => (m?.tone === "busy" ? m : undefined)),
            setDialog({ kind: "confirm", id: nextDialog++, ...request, resolve: (result) => (setDialog(undefined), resolve(result)) })),
          ),
        prompt: (request) =>
          new Promise((resolve) => (router.holdForDialog(), setDialog({ kind: "prompt", id: nextDialog++, ...request, resolve: (text) => (setDialog(undefined), resolve(text)) }))),
        working: (label) => {
          const id = nextWork++;
          underWay.current.set(id, label);
          return () => underWay.current.delete(id);
        },
      },
    };
    // The services live as long as the console: the props that build them do not change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // The outcome of an action is news for a while, not a label of every view after it (k9s's flash).
  useEffect(() => {
    if (!message || message.tone === "busy") return;
    const timer = setTimeout(() => setMessage((current) => (current === message ? undefined : current)), MESSAGE_MS[message.tone]);
    return () => clearTimeout(timer);
  }, [message]);
  // Nor of the views moved to after it.
  useEffect(() => services.ui.moved(), [stack, services]);

  useEffect(() => {
    const { feed, data } = services;
    feed.onError = setFeedError;
    feed.start();
    void data.start().catch((error: unknown) => setMessage({ tone: "error", text: clean(`reading the store failed: ${errorMessage(error)}`) }));
    return () => {
      data.stop();
      void feed.stop();
    };
  }, [services]);

  useInput((input, key) => {
    keysPressed.current++;
    if (closing.current || router.dispatch(input, key)) return;
    // An action key that applies to nothing on screen (kill on a node that is not running, retry on
    // one that succeeded) says so rather than doing nothing in silence.
    const name = keyName(input, key);
    // Several entries share a key (`a` approves on the runs list and in the queue): the one this view has is told.
    const speaks = (b: Binding) => b.keys.includes(name) && (b.writes || b.id === "diff");
    const binding = router.namedHere(name).find(speaks) ?? router.bindings.find(speaks);
    if (binding) setMessage({ tone: "info", text: `${keyLabel(name)} (${binding.label}): nothing here it applies to` });
  });

  // An action that fails (the store cannot be reached while it reads or writes) says so once, in the footer.
  router.onFailure = (binding, error) => setMessage({ tone: "error", text: failureText(binding.label, error) });
  // What reading the store last failed with (the live feed's problem comes first).
  const readError = useSyncExternalStore(services.data.subscribe, () => services.data.snapshot().error);
  const { nav, ui } = services;
  const top = stack[stack.length - 1]!;
  // Quitting (q, ctrl-c from anywhere, :q) does not stop a write part-way: it asks first. A dialog
  // open meanwhile stays under the question, as it was, for an operator who stays.
  const quit = () => {
    const writing = [...underWay.current.values()];
    if (writing.length === 0) return nav.quit();
    router.holdForDialog();
    setQuitQuestion({ id: nextDialog++, underWay: writing.join(", "), resolve: (yes) => (setQuitQuestion(undefined), yes && nav.quit()) });
  };
  const appKeys: Handlers = {
    quit,
    back: stack.length > 1 && nav.pop,
    help: () => nav.push(helpPage(router.bindings)),
    interrupts: top.kind !== "interrupts" && (() => nav.push({ kind: "interrupts" })),
    schedules: top.kind !== "schedules" && (() => nav.push({ kind: "schedules" })),
    // Views that have a run, interrupt or task to copy take `y` before this.
    copy: explain(() => ui.report({ tone: "info", text: "y: nothing here has an id to copy (y copies the selected run's, interrupt's or task's)" })),
    palette: () =>
      ui.prompt({ title: ":", complete: (text) => paletteSuggestions(text, services.data.snapshot()), hint: "runs · interrupts · schedules · run <id> · help · q — tab completes" }).then((text) => {
        if (text === undefined) return;
        const command = paletteCommand(text, services.data.snapshot());
        if (command.kind === "error") return ui.report({ tone: "error", text: command.message });
        if (command.kind === "quit") return quit();
        if (command.kind === "help") return nav.push(helpPage(router.bindings));
        if (command.kind === "runs") return nav.home();
        // A run the list does not hold is looked for in the store before its view is opened.
        const { view } = command;
        if (view.kind === "run" && !services.data.snapshot().runs.has(view.runId)) {
          void services.store.getRun(view.runId).then(
            (run) => (run ? nav.push(view) : ui.report({ tone: "error", text: `run ${view.runId} not found` })),
            (error: unknown) => ui.report({ tone: "error", text: clean(errorMessage(error)) }),
          );
          return;
        }
        nav.push(view);
      }),
  };

  if (size.columns < MIN.columns || size.rows < MIN.rows) {
    // Only quitting is offered: what it says is all there is room for, broken between words.
    const text = wrapWords(`terminal too small: ${size.columns}×${size.rows} (needs ${MIN.columns}×${MIN.rows}); q quits`, size.columns);
    return (
      <KeyRouterContext.Provider value={router}>
        <AppKeys handlers={{ quit: nav.quit }} />
        <Lines lines={text.map((t) => [seg(t)])} width={size.columns} />
      </KeyRouterContext.Provider>
    );
  }
  const width = size.columns;
  // The outcome of the last action and the store's problem, both, wrapped: the view gives up the rows.
  const status = statusLines(message, feedError ?? readError, width).slice(0, Math.max(1, size.rows - MIN.rows));
  // Ink redraws a frame as tall as the terminal from scratch (a flicker), so one row stays free.
  const bodyHeight = size.rows - 1 - 2 - status.length;
  const quitRows = quitQuestion ? 1 : 0;
  const dialogRows = dialog ? Math.min(dialogHeight(dialog, dialog.kind === "confirm" && dialog.long ? bodyHeight : 8, width), bodyHeight - 3 - quitRows) : 0;
  const viewHeight = bodyHeight - dialogRows - quitRows;
  return (
    <ServicesContext.Provider value={services}>
      <KeyRouterContext.Provider value={router}>
        <AppKeys handlers={appKeys} />
        <Box flexDirection="column" width={width}>
          <Header width={width} />
          {/* Rows are cut to the width already (Lines): clipping across as well would make Ink slice every row's styled text each frame. */}
          <Box height={viewHeight} flexDirection="column" overflowY="hidden">
            <ViewMemoryContext.Provider value={memoryFor(memory.current, stack.length)}>
              <View key={stack.length} entry={top} width={width} height={viewHeight} />
            </ViewMemoryContext.Provider>
          </Box>
          {dialog?.kind === "confirm" && <ConfirmDialog key={dialog.id} dialog={dialog} width={width} height={dialogRows} />}
          {dialog?.kind === "prompt" && <PromptDialog key={dialog.id} dialog={dialog} width={width} />}
          {quitQuestion && <QuitDialog key={quitQuestion.id} dialog={quitQuestion} width={width} />}
          <Footer width={width} status={status} />
        </Box>
      </KeyRouterContext.Provider>
    </ServicesContext.Provider>
  );
}

function AppKeys({ handlers }: { handlers: Handlers }) {
  useKeys(PRIORITY.app, handlers);
  return null;
}

function View({ entry, width, height }: { entry: ViewEntry; width: number; height: number }) {
  switch (entry.kind) {
    case "runs":
      return <RunsView width={width} height={height} />;
    case "run":
      return <RunView key={entry.runId} runId={entry.runId} initialTab={entry.tab ?? 0} width={width} height={height} />;
    case "interrupts":
      return <InterruptsView width={width} height={height} />;
    case "schedules":
      return <SchedulesView width={width} height={height} />;
    case "operator":
      return <OperatorPanel interruptId={entry.interruptId} queue={entry.queue} width={width} height={height} />;
    case "text":
      return <TextView title={entry.title} lines={entry.lines} indent={entry.indent} width={width} height={height} />;
    case "task":
      return <TaskView target={entry} width={width} height={height} />;
  }
}

/** Two views that show the same thing (a text page by its title). */
function sameView(a: ViewEntry | undefined, b: ViewEntry): boolean {
  if (!a || a.kind !== b.kind) return false;
  switch (b.kind) {
    case "run":
      return a.kind === "run" && a.runId === b.runId;
    case "operator":
      return a.kind === "operator" && a.interruptId === b.interruptId;
    case "text":
      return a.kind === "text" && a.title === b.title;
    case "task":
      return a.kind === "task" && a.runId === b.runId && a.node === b.node && a.taskId === b.taskId;
    default:
      return true;
  }
}
