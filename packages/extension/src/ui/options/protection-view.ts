import type { AllowlistImportResult } from '../../protection/protection-protocol.js';
import type { PolicyExport } from '../../site-rules/http-allowlist-policy.js';
import type { Settings } from '../../settings/schema.js';
import { background, isError } from '../shared/client.js';
import { $, download, h } from '../shared/dom.js';
import { t, tCount } from '../shared/i18n.js';
import { details } from '../shared/problem.js';

/**
 * The protection mode's parts of the options page: the known HTTPS sites (count, forget), the
 * "rulesets only" list in Chrome's HttpAllowlist policy syntax, and the re-check log.
 */
export class ProtectionView {
  constructor(private readonly onChange: (s: Settings) => void) {
    $('#known-hosts-forget').addEventListener('click', async () => {
      if (!confirm(t('optionsKnownHostsForgetConfirm'))) return;
      await background.request({ type: 'knownHosts', forget: true });
      await this.refresh();
    });
    $('#allowlist-export').addEventListener('click', async () => {
      const out = await background.request<PolicyExport>({ type: 'allowlistExport' });
      download('http-allowlist.json', `${out.json}\n`, 'application/json');
      this.show(out.notes.length > 0 ? t('optionsAllowlistNotes') : '', out.notes);
    });
    const input = $<HTMLInputElement>('#allowlist-import');
    input.addEventListener('change', async () => {
      const file = input.files?.[0];
      input.value = '';
      if (file === undefined) return;
      const result = await background.request<
        (AllowlistImportResult & { settings?: Settings }) | { error: string }
      >({
        type: 'allowlistImport',
        text: await file.text(),
      });
      if (isError(result)) return this.show(t('problemGeneric'), [], result.error);
      if (!result.ok) {
        // Not a policy at all: one sentence, the parser's words under "Details"; else each bad item is listed.
        const notPolicy =
          result.problems.length === 1 && /^not (JSON|a JSON array)/.test(result.problems[0] ?? '');
        if (notPolicy)
          return this.show(t('optionsAllowlistNotPolicy', file.name), [], result.problems[0]);
        return this.show(t('optionsAllowlistRefusedItems', file.name), result.problems);
      }
      this.show(tCount('optionsAllowlistImported', result.added, String(result.added)), []);
      if (result.settings !== undefined) this.onChange(result.settings);
    });
  }

  private show(message: string, lines: string[], raw = ''): void {
    $('#allowlist-result').replaceChildren(
      h('span', {}, message),
      ...(raw === '' ? [] : [details(raw)]),
    );
    $('#allowlist-problems').replaceChildren(...lines.map((l) => h('li', {}, l)));
  }

  /** Figures that live outside the settings (machine-local stores). */
  async refresh(): Promise<void> {
    const known = await background.request<{ count: number } | { error: string }>({
      type: 'knownHosts',
    });
    const count = isError(known) ? 0 : known.count;
    $('#known-hosts-text').textContent = tCount('optionsKnownHosts', count, String(count));
    $('#known-hosts-forget').hidden = count === 0;
    const log = await background.request<{ entry: string; at: number }[] | { error: string }>({
      type: 'recheckLog',
    });
    $('#recheck-log').replaceChildren(
      ...(isError(log) ? [] : log)
        .slice(-5)
        .map((r) =>
          h('li', {}, t('optionsRecheckRestored', [r.entry, new Date(r.at).toLocaleDateString()])),
        ),
    );
  }
}
