import {
  EntryCollector,
  LIBRARY_LIMITS,
  LibraryRefused,
  type ArchiveContents,
  type FileProblem,
} from '../../library/archive-entries.js';
import { ArchiveCancelled, readArchiveOffThread } from '../../library/archive-reader.js';
import type { LibraryProgress } from '../../library/library-compile.js';
import type { LibraryPreview, LibraryStatus } from '../../library/library-protocol.js';
import { background, isError } from '../shared/client.js';
import { $, h } from '../shared/dom.js';
import { t, tCount } from '../shared/i18n.js';
import { libraryImportProblem } from '../shared/library-problem.js';
import { details } from '../shared/problem.js';

function problemItems(problems: FileProblem[]): HTMLLIElement[] {
  return problems.map((p) =>
    h(
      'li',
      {},
      p.line > 0
        ? t('optionsLibraryProblemItem', [p.file, String(p.line), p.message])
        : t('optionsLibraryProblemItemNoLine', [p.file, p.message]),
    ),
  );
}

/**
 * One bar for the whole import, stage after stage, that never runs backwards: each stage fills
 * its own share (reading, sending, parsing, compiling, storing).
 */
const STAGE_SHARE: Record<LibraryProgress['stage'] | 'send', [number, number]> = {
  read: [0, 0.2],
  send: [0.2, 0.35],
  parse: [0.35, 0.9],
  compile: [0.9, 0.95],
  store: [0.95, 1],
};

/** Files go to the background in batches of about this many characters (ports carry JSON). */
const BATCH_CHARS = 2 * 1024 * 1024;
/**
 * How often the open preview tells the background it is still wanted: well inside the 30 s
 * after which Firefox and Chromium end an idle background (a shorter pref is honoured down to
 * this).
 */
const PREVIEW_HOLD_MS = 2_000;
/** What the person chose on the preview, or `lost`: the background no longer holds it. */
type PreviewChoice = 'all' | 'safe' | 'none' | 'lost';

/**
 * "Ruleset library": shows the imported library (switch, counts, problems, remove) and imports
 * a new one from a folder or an archive. The page unpacks (checking names and limits as it
 * goes) and hands the XML files over; the background checks them again, parses, compiles and
 * stores, sending progress back.
 */
export class LibraryView {
  private busy = false;
  /** How far the one bar has got (0..1) in this import. */
  private shown = 0;
  /** The user chose Cancel: what is under way stops, and nothing is stored. */
  private cancelled = false;
  /** The preview's choice, once made. */
  private choose: ((choice: PreviewChoice) => void) | null = null;

  /** `imported`: the library changed (the rulesets list and counts reload). */
  constructor(private readonly imported: () => void = () => undefined) {
    for (const [id, choice] of [
      ['#library-apply', 'all'],
      ['#library-apply-safe', 'safe'],
      ['#library-discard', 'none'],
    ] as const)
      $(id).addEventListener('click', () => this.choose?.(choice));
    $('#library-cancel').addEventListener('click', () => {
      this.cancelled = true;
    });
    $<HTMLInputElement>('#library-enabled').addEventListener(
      'change',
      (e) => void this.setEnabled((e.target as HTMLInputElement).checked),
    );
    $('#library-remove').addEventListener('click', () => void this.remove());
    $<HTMLInputElement>('#library-folder').addEventListener(
      'change',
      (e) => void this.importFolder(e.target as HTMLInputElement),
    );
    $<HTMLInputElement>('#library-archive').addEventListener(
      'change',
      (e) => void this.importArchive(e.target as HTMLInputElement),
    );
    background.progressListeners.add((p) => this.showProgress(p as LibraryProgress));
  }

  async load(): Promise<void> {
    const status = await background.request<LibraryStatus | { error: string }>({
      type: 'libraryStatus',
    });
    if (!isError(status)) this.render(status);
  }

  render(status: LibraryStatus): void {
    const info = status.info;
    $('#library-none').hidden = info !== null;
    $('#library-current').hidden = info === null;
    const stored = $('#library-stored-problem');
    stored.hidden = status.problem === null;
    if (status.problem === null) stored.replaceChildren();
    else
      stored.replaceChildren(
        h('span', {}, t('optionsLibraryStoredProblem')),
        details(status.problem),
      );
    if (info === null) {
      if (status.problem !== null) $('#library-current').hidden = false;
      return;
    }
    $('#library-name').textContent = info.name;
    $('#library-summary').textContent = t('optionsLibrarySummary', [
      tCount('countRulesets', info.rulesetCount, info.rulesetCount.toLocaleString()),
      tCount('countFiles', info.fileCount, info.fileCount.toLocaleString()),
      new Date(info.importedAt).toLocaleString(),
    ]);
    $<HTMLInputElement>('#library-enabled').checked = info.enabled;
    const browser = $('#library-browser-problem');
    browser.hidden = status.platformProblem === null;
    // The same limits as a channel's (Chromium's rule counts), said for the library; raw under "Details".
    if (status.platformProblem === null) browser.replaceChildren();
    else
      browser.replaceChildren(
        h(
          'span',
          {},
          t(
            /do not fit/.test(status.platformProblem)
              ? 'optionsLibraryBrowserTooBig'
              : 'optionsLibraryBrowserProblem',
          ),
        ),
        details(status.platformProblem),
      );
    // Chromium: by name, the rulesets that only work when a page of their sites is opened.
    const pageLoads = status.pageLoadsOnly;
    $('#library-page-loads').hidden = pageLoads.length === 0;
    $('#library-page-loads-title').textContent = t(
      'optionsLibraryPageLoadsTitle',
      pageLoads.length.toLocaleString(),
    );
    $('#library-page-loads-list').replaceChildren(...pageLoads.map((name) => h('li', {}, name)));
    const count = info.problems.length + info.moreProblems;
    $('#library-problems').hidden = count === 0;
    $('#library-problems-title').textContent = t(
      'optionsLibraryProblemsTitle',
      count.toLocaleString(),
    );
    const items = problemItems(info.problems);
    if (info.moreProblems > 0)
      items.push(
        h(
          'li',
          { class: 'muted' },
          t('optionsLibraryMoreProblems', info.moreProblems.toLocaleString()),
        ),
      );
    $('#library-problem-list').replaceChildren(...items);
  }

  private async setEnabled(enabled: boolean): Promise<void> {
    const status = await background.request<LibraryStatus | { error: string }>({
      type: 'librarySetEnabled',
      enabled,
    });
    if (!isError(status)) this.render(status);
    this.imported();
  }

  private async remove(): Promise<void> {
    if (!confirm(t('optionsLibraryRemoveConfirm'))) return;
    const status = await background.request<LibraryStatus | { error: string }>({
      type: 'libraryRemove',
    });
    if (!isError(status)) this.render(status);
    this.imported();
  }

  private advance(stage: keyof typeof STAGE_SHARE, done: number, total: number): void {
    const [from, to] = STAGE_SHARE[stage];
    this.shown = Math.max(
      this.shown,
      from + (to - from) * Math.min(1, total <= 0 ? 1 : done / total),
    );
    const bar = $<HTMLProgressElement>('#library-progress');
    bar.max = 1000;
    bar.value = Math.round(this.shown * 1000);
  }

  private showProgress(p: LibraryProgress): void {
    this.advance(p.stage, p.done, p.total);
    const text =
      p.stage === 'parse'
        ? tCount('optionsLibraryParsing', p.total, [
            p.done.toLocaleString(),
            p.total.toLocaleString(),
          ])
        : p.stage === 'compile'
          ? tCount('optionsLibraryCompiling', p.total, p.total.toLocaleString())
          : p.stage === 'store'
            ? t('optionsLibraryStoring')
            : t('optionsLibraryReading', [p.done.toLocaleString(), p.total.toLocaleString()]);
    $('#library-status').textContent = text;
  }

  private start(): boolean {
    if (this.busy) return false;
    this.busy = true;
    this.shown = 0;
    this.cancelled = false;
    this.advance('read', 0, 1);
    $('#library-error').hidden = true;
    $('#library-preview').hidden = true;
    $('#library-progress-box').hidden = false;
    // Cancel stays offered for the whole import, not only while an archive unpacks.
    $('#library-cancel').hidden = false;
    for (const id of ['#library-folder', '#library-archive'])
      $<HTMLInputElement>(id).disabled = true;
    return true;
  }

  private end(): void {
    this.busy = false;
    $('#library-progress-box').hidden = true;
    $('#library-cancel').hidden = true;
    for (const id of ['#library-folder', '#library-archive']) {
      const input = $<HTMLInputElement>(id);
      input.disabled = false;
      input.value = '';
    }
  }

  /** Nothing was imported: why in words, the files' own problems when that is the reason, raw text under "Details". */
  private fail(reason: string, problems: FileProblem[] = []): void {
    $('#library-status').textContent = '';
    const error = $('#library-error');
    error.hidden = false;
    const list =
      problems.length === 0 ? [] : [h('ul', { class: 'problem-list' }, ...problemItems(problems))];
    error.replaceChildren(h('span', {}, t(libraryImportProblem(reason))), ...list, details(reason));
  }

  private async importFolder(input: HTMLInputElement): Promise<void> {
    const files = Array.from(input.files ?? []);
    if (files.length === 0 || !this.start()) return;
    try {
      const collector = new EntryCollector();
      for (let i = 0; i < files.length; i++) {
        const f = files[i] as File;
        const path = collector.admit(f.webkitRelativePath || f.name, f.size);
        if (path !== null) collector.add(path, new Uint8Array(await f.arrayBuffer()));
        if (i % 200 === 0 || i + 1 === files.length)
          this.showProgress({ stage: 'read', done: i + 1, total: files.length });
      }
      const first = files[0]?.webkitRelativePath.split('/')[0];
      await this.send(first || (files[0]?.name ?? ''), collector.contents);
    } catch (e) {
      this.fail(e instanceof LibraryRefused ? e.message : String(e));
    } finally {
      this.end();
    }
  }

  private async importArchive(input: HTMLInputElement): Promise<void> {
    const file = input.files?.[0];
    if (file === undefined || !this.start()) return;
    try {
      // An archive is never larger than what it unpacks to, bar headers.
      if (file.size > LIBRARY_LIMITS.totalBytes + 16 * 1024 * 1024)
        throw new LibraryRefused(`${file.name} is larger than 64 MB`);
      this.showProgress({ stage: 'read', done: 0, total: 1 });
      // Unpacked in a worker: the page stays usable and Cancel stops the work at once.
      const cancel = new AbortController();
      const button = $('#library-cancel');
      const onCancel = (): void => cancel.abort();
      button.addEventListener('click', onCancel, { once: true });
      let contents: ArchiveContents;
      try {
        contents = await readArchiveOffThread(await file.arrayBuffer(), cancel.signal);
      } finally {
        button.removeEventListener('click', onCancel);
      }
      this.showProgress({ stage: 'read', done: 1, total: 1 });
      await this.send(file.name, contents);
    } catch (e) {
      if (e instanceof ArchiveCancelled)
        $('#library-status').textContent = t('optionsLibraryCancelled');
      else this.fail(e instanceof Error ? e.message : String(e));
    } finally {
      this.end();
    }
  }

  private discarded(): void {
    $('#library-preview').hidden = true;
    $('#library-status').textContent = t('optionsLibraryDiscarded');
  }

  /** What the import would change, with "Import", "Import without cross-site rules" and Cancel. */
  private showPreview(name: string, p: LibraryPreview): Promise<PreviewChoice> {
    $('#library-preview-title').textContent = t('optionsLibraryPreviewTitle', name);
    $('#library-preview-summary').textContent = t(
      'optionsLibraryPreviewSummary',
      tCount('countRulesets', p.rulesetCount, p.rulesetCount.toLocaleString()),
    );
    const list = (key: string, count: number, items: string[]) => {
      $(`#library-preview-${key}`).hidden = count === 0;
      const more = count - items.length;
      $(`#library-preview-${key}-list`).replaceChildren(
        ...items.map((text) => h('li', {}, text)),
        ...(more > 0
          ? [h('li', { class: 'muted' }, t('optionsLibraryPreviewMore', more.toLocaleString()))]
          : []),
      );
    };
    const item = (i: { ruleset: string; rule: string }) =>
      t('optionsLibraryPreviewItem', [i.ruleset, i.rule]);
    $('#library-preview-cross-title').textContent = t(
      'optionsLibraryPreviewCross',
      tCount('countRulesets', p.crossSite.count, p.crossSite.count.toLocaleString()),
    );
    list('cross', p.crossSite.count, p.crossSite.items.map(item));
    $('#library-preview-http-title').textContent = t(
      'optionsLibraryPreviewHttp',
      tCount('countRulesets', p.toHttp.count, p.toHttp.count.toLocaleString()),
    );
    list('http', p.toHttp.count, p.toHttp.items.map(item));
    $('#library-preview-overrides-title').textContent = t(
      'optionsLibraryPreviewOverrides',
      p.overrides.count.toLocaleString(),
    );
    list('overrides', p.overrides.count, p.overrides.names);
    $('#library-apply-safe').hidden = p.crossSite.count + p.toHttp.count === 0;
    $('#library-preview').hidden = false;
    $('#library-apply').focus();
    return new Promise((resolve) => {
      this.choose = (choice) => {
        this.choose = null;
        $('#library-preview').hidden = true;
        resolve(choice);
      };
    });
  }

  private async send(name: string, contents: ArchiveContents): Promise<void> {
    const begun = await background.request<{ upload: number } | { error: string }>({
      type: 'libraryBegin',
      name,
      skipped: contents.skipped,
      problems: contents.problems,
    });
    if (isError(begun)) return this.fail(begun.error);
    const files = contents.files;
    let at = 0;
    while (at < files.length) {
      const batch = [];
      let chars = 0;
      while (
        at < files.length &&
        (batch.length === 0 || chars + (files[at]?.text.length ?? 0) <= BATCH_CHARS)
      ) {
        const f = files[at++] as (typeof files)[number];
        chars += f.text.length;
        batch.push(f);
      }
      if (this.cancelled) return this.discarded();
      const sent = await background.request<{ received: number } | { error: string }>({
        type: 'libraryFiles',
        upload: begun.upload,
        files: batch,
      });
      if (isError(sent)) return this.fail(sent.error);
      this.advance('send', at, files.length);
      $('#library-status').textContent = t('optionsLibrarySending', [
        at.toLocaleString(),
        files.length.toLocaleString(),
      ]);
    }
    const previewed = await background.request<
      { preview: LibraryPreview } | { error: string; problems?: FileProblem[] }
    >({
      type: 'libraryFinish',
      upload: begun.upload,
    });
    if (isError(previewed)) return this.fail(previewed.error, previewed.problems ?? []);
    if (this.cancelled) {
      await background.request({ type: 'libraryDiscard', upload: begun.upload });
      return this.discarded();
    }
    // Nothing is stored yet: the user sees what it changes and chooses.
    $('#library-progress-box').hidden = true;
    $('#library-status').textContent = '';
    // The background holds the preview in memory only: each hold also counts as activity, so an
    // idle background is not ended under a person reading it; a lost one is said at once.
    const hold = setInterval(() => {
      void background
        .request<{ held: boolean } | { error: string }>({
          type: 'libraryHold',
          upload: begun.upload,
        })
        .then((r) => {
          if (isError(r) || !r.held) this.choose?.('lost');
        });
    }, PREVIEW_HOLD_MS);
    const choice = await this.showPreview(name, previewed.preview).finally(() =>
      clearInterval(hold),
    );
    if (choice === 'lost') return this.fail('this import was interrupted; start it again');
    if (choice === 'none') {
      await background.request({ type: 'libraryDiscard', upload: begun.upload });
      return this.discarded();
    }
    $('#library-progress-box').hidden = false;
    const done = await background.request<
      (LibraryStatus & { error?: undefined }) | { error: string; problems?: FileProblem[] }
    >({
      type: 'libraryApply',
      upload: begun.upload,
      withoutCrossSite: choice === 'safe',
    });
    if (isError(done)) return this.fail(done.error, done.problems ?? []);
    this.advance('store', 1, 1);
    this.render(done);
    this.imported();
    $('#library-status').textContent = tCount('optionsLibraryDone', done.info?.rulesetCount ?? 0, [
      (done.info?.rulesetCount ?? 0).toLocaleString(),
      name,
    ]);
  }
}
