import { DnrEmulator, type DnrRule } from '@httpsify/engine/dnr';
import { STATIC_RULES_PATH, STATIC_RULESET_ID } from '../platform/packaged-files.js';
import { ext } from '../platform/browser-api.js';
import type { DnrApi } from './dnr-api.js';

/**
 * Whether the browser's DNR rules (static defaults, dynamic overrides and channels) upgrade a URL. The
 * compiled rules cover less than the engine (what did not fit is left out), and a cookie made
 * Secure on a host that stays on HTTP would stop being sent: cookie decisions ask this too.
 */
export class DnrUpgradeCheck {
  private emulator: Promise<DnrEmulator> | null = null;

  constructor(private readonly dnr: Pick<DnrApi, 'getEnabledRulesets' | 'getDynamicRules'>) {}

  /** Call after the dynamic rules change. */
  invalidate(): void {
    this.emulator = null;
  }

  async upgrades(url: string): Promise<boolean> {
    this.emulator ??= this.load();
    const target = (await this.emulator).match({ url, type: 'main_frame' }).redirectUrl;
    return target !== null && target.startsWith('https:');
  }

  private async load(): Promise<DnrEmulator> {
    // An update channel that replaces the defaults switches the static ruleset off.
    const staticOn = (await this.dnr.getEnabledRulesets()).includes(STATIC_RULESET_ID);
    const staticRules = staticOn
      ? ((await (await fetch(ext.runtime.getURL(STATIC_RULES_PATH))).json()) as DnrRule[])
      : [];
    const dynamicRules: DnrRule[] = await this.dnr.getDynamicRules();
    return new DnrEmulator([...staticRules, ...dynamicRules]);
  }
}
