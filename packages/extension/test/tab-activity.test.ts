import { describe, expect, it } from 'vitest';
import { TabActivity } from '../src/status/tab-activity.js';

const HTTP = 'http://kept.example.test/other';
const HTTPS = 'https://kept.example.test/other';
const upgradedSighting = {
  tabId: 7,
  type: 'main_frame',
  url: HTTP,
  rulesets: [],
  upgraded: true,
  httpsFirst: true,
  upgradedTo: HTTPS,
};
const httpsSighting = { tabId: 7, type: 'main_frame', url: HTTPS, rulesets: [], upgraded: false };

describe("a tab's record of its page", () => {
  it('knows HTTPS-first moved the page, whichever of the two sightings comes first', () => {
    for (const order of [
      [upgradedSighting, httpsSighting],
      [httpsSighting, upgradedSighting],
    ]) {
      const activity = new TabActivity();
      activity.note({
        tabId: 7,
        type: 'main_frame',
        url: 'http://kept.example.test/plain',
        rulesets: [],
        upgraded: false,
      });
      for (const seen of order) activity.note(seen);
      const rec = activity.get(7);
      expect(rec).toMatchObject({
        url: HTTPS,
        mainUpgraded: true,
        upgradedFrom: HTTP,
        httpsFirst: true,
        upgraded: 1,
      });
    }
  });

  it('asking again for a page over http:// starts a fresh record, not the old page’s counts', () => {
    const activity = new TabActivity();
    activity.note(httpsSighting);
    activity.note({
      tabId: 7,
      type: 'image',
      url: 'http://cdn.example.test/a.png',
      rulesets: ['CDN'],
      upgraded: true,
    });
    expect(activity.get(7)).toMatchObject({ upgraded: 1, others: ['CDN'] });
    activity.note(upgradedSighting);
    activity.note(httpsSighting);
    expect(activity.get(7)).toMatchObject({
      url: HTTPS,
      mainUpgraded: true,
      upgraded: 1,
      others: [],
    });
  });

  it('a page opened over HTTPS by itself is not taken for one we upgraded', () => {
    const activity = new TabActivity();
    activity.note(httpsSighting);
    activity.note({
      ...upgradedSighting,
      url: 'http://kept.example.test/elsewhere',
      upgradedTo: 'https://kept.example.test/elsewhere',
    });
    expect(activity.get(7)).toMatchObject({ url: 'http://kept.example.test/elsewhere' });
    expect(activity.get(7)?.mainUpgraded).toBeUndefined();
  });
});
