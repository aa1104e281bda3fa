// What the rooms page and the dialer share: the error line (#error) and the screen-reader announcer
// (#announcer), actions whose failure lands in that line, and a user logged in by name at the page's app
// server, kept for the browser tab's session and renewed when the realtime gateway refuses its token.

const byId = (id) => document.getElementById(id);

/** Shows `message` in the page's error line; an empty one hides it. */
export function error(message) {
  byId("error").textContent = message || "";
  byId("error").hidden = !message;
}

/** Runs `fn` with the error line cleared; what it throws is shown there. */
export async function guarded(fn) {
  try { error(""); await fn(); } catch (e) { console.error(e); error(e.message || String(e)); }
}

/** Reads `text` out through the page's live region. */
export function announce(text) {
  const el = byId("announcer");
  // A repeated message is only announced again when the region's text actually changes.
  el.textContent = el.textContent === text ? `${text}\u00a0` : text;
}

/**
 * A user logged in by name: `POST /auth {name}` at the app server answers `{name, jwt}`. The user is kept
 * in sessionStorage under `storageKey`, so a reload of the tab logs in again without asking.
 */
export class NamedLogin {
  constructor(appApi, storageKey) {
    this.appApi = appApi;
    this.storageKey = storageKey;
    this.user = null;  // {name, jwt}
  }

  /** The user this tab logged in earlier, or null. */
  saved() {
    try { return JSON.parse(sessionStorage.getItem(this.storageKey)); } catch { return null; }
  }

  /** Asks the app server for a token for `name`; keeps and returns the user. */
  async byName(name) {
    const reply = await this.appApi("POST", "/auth", { body: { name } });
    return this.keep({ name: reply.name, jwt: reply.jwt });
  }

  keep(user) {
    this.user = user;
    sessionStorage.setItem(this.storageKey, JSON.stringify(user));
    return user;
  }

  /** A new token for the same name: the realtime client's token provider. */
  renew = async () => (await this.byName(this.user.name)).jwt;

  forget() {
    sessionStorage.removeItem(this.storageKey);
    this.user = null;
  }

  /**
   * Connects `rt` and logs it in with the user's token; a token kept from an earlier visit that has
   * expired (or that the server no longer knows) is renewed once. On failure `rt` is closed.
   */
  async open(rt) {
    try {
      await rt.connect();
      try {
        await rt.login(this.user.jwt);
      } catch (e) {
        if (e.code !== "tokenExpired" && e.code !== "invalidToken") throw e;
        await rt.login(await this.renew());
      }
    } catch (e) {
      rt.close();
      throw e;
    }
  }

  /**
   * Wires the page's #login-form (#name, #login) to log in by name and then call `enter(user)`, and logs the
   * kept user in at once through `enter`; a kept user `enter` fails for is forgotten. Resolves to whether
   * someone is logged in.
   */
  async start(enter) {
    byId("login-form").addEventListener("submit", (ev) => {
      ev.preventDefault();
      guarded(async () => {
        const name = byId("name").value.trim();
        if (!name) return;
        byId("login").disabled = true;
        try {
          await enter(await this.byName(name));
        } finally {
          byId("login").disabled = false;
        }
      });
    });
    const saved = this.saved();
    if (!saved) return false;
    try {
      await enter(this.keep(saved));
      return true;
    } catch {
      this.forget();
      return false;
    }
  }
}
