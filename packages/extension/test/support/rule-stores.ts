import type { DnrRulesApi } from '../../src/dnr/rule-writer.js';
import type { ExtRule } from '../../src/dnr/rules.js';

/** declarativeNetRequest's dynamic and session rule stores, each update all or nothing. */
export class RuleStores implements DnrRulesApi {
  dynamic: ExtRule[] = [];
  session: ExtRule[] = [];
  /** Whole reads of the dynamic store (a waking worker with the writer's record reads none). */
  dynamicReads = 0;
  /** The next dynamic update is applied and never answered: the worker stopped meanwhile. */
  hangNextDynamic = false;
  async getDynamicRules() {
    this.dynamicReads++;
    return structuredClone(this.dynamic);
  }
  async getSessionRules() {
    return structuredClone(this.session);
  }
  async updateDynamicRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    this.dynamic = [...this.dynamic.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
    if (this.hangNextDynamic) {
      this.hangNextDynamic = false;
      await new Promise(() => undefined);
    }
  }
  async updateSessionRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    this.session = [...this.session.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
  }
}
