import type { DnrRulesApi } from '../../src/dnr/rule-writer.js';
import type { ExtRule } from '../../src/dnr/rules.js';

/** declarativeNetRequest's dynamic and session rule stores, each update all or nothing. */
export class RuleStores implements DnrRulesApi {
  dynamic: ExtRule[] = [];
  session: ExtRule[] = [];
  async getDynamicRules() {
    return structuredClone(this.dynamic);
  }
  async getSessionRules() {
    return structuredClone(this.session);
  }
  async updateDynamicRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    this.dynamic = [...this.dynamic.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
  }
  async updateSessionRules(u: { removeRuleIds: number[]; addRules: ExtRule[] }) {
    this.session = [...this.session.filter((r) => !u.removeRuleIds.includes(r.id)), ...u.addRules];
  }
}
