// "Your turn", said where a person looks when the table's tab is not in front: the tab's title
// ("(Your turn) …") and a badge on its icon while the seat is to act; when the turn arrives, a
// short beep and a vibration on phones (the sound toggle, off by default) and a browser
// notification (the "Alert me" toggle: the browser is asked for permission on that click, never
// on load). The toggles are kept on this device (localStorage "speculation.alerts").
//
// The icon is drawn on a canvas into a data: URL (the pages' CSP allows `img-src data:`).
import { h, replace } from "./dom.js";
import { toast } from "./ui.js";

const STORE = "speculation.alerts";
const BADGE = "(Your turn) ";

function readPrefs() {
  try {
    const kept = JSON.parse(localStorage.getItem(STORE) || "{}");
    return { sound: kept.sound === true, notify: kept.notify === true };
  } catch { return { sound: false, notify: false }; }
}

function keepPrefs(prefs) {
  try { localStorage.setItem(STORE, JSON.stringify(prefs)); } catch { /* storage refused: this page only */ }
}

// The site's icon, with a red dot at its corner when `badge`.
function iconUrl(badge) {
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 32;
  const g = canvas.getContext("2d");
  if (!g) return "data:,";
  g.fillStyle = "#1f4e79";
  g.beginPath();
  g.arc(14, 18, 13, 0, 2 * Math.PI);
  g.fill();
  g.fillStyle = "#ffffff";
  g.font = "bold 18px sans-serif";
  g.textAlign = "center";
  g.textBaseline = "middle";
  g.fillText("S", 14, 19);
  if (badge) {
    g.fillStyle = "#d0021b";
    g.strokeStyle = "#ffffff";
    g.lineWidth = 2;
    g.beginPath();
    g.arc(24, 8, 7, 0, 2 * Math.PI);
    g.fill();
    g.stroke();
  }
  return canvas.toDataURL("image/png");
}

export class TurnAlerts {
  constructor() {
    this.prefs = readPrefs();
    this.yours = null;          // null until the first view: a page opened on its turn does not beep
    this.baseTitle = document.title;
    this.audio = null;
    this.icons = {};
    this.el = h("div", { class: "turn-alerts", id: "turn-alerts", role: "group", "aria-label": "Turn alerts" });
    this.draw();
  }

  // The page's title without the badge (the game's name, set once it is known).
  setTitle(title) {
    this.baseTitle = title;
    this.show();
  }

  // The seat is (or is not) to act now; `what` says in words what is asked of it.
  update(yours, what = "") {
    const arrived = yours && this.yours === false;
    this.yours = yours;
    this.show();
    if (!arrived) return;
    if (this.prefs.sound) {
      this.beep();
      if (navigator.vibrate) navigator.vibrate([150, 80, 150]);
    }
    if (this.prefs.notify && "Notification" in window && Notification.permission === "granted" &&
        document.visibilityState !== "visible") {
      const note = new Notification(`Your turn: ${this.baseTitle}`, { body: what, tag: location.pathname });
      note.onclick = () => { window.focus(); note.close(); };
    }
    document.body.dataset.turnAlerts = String(Number(document.body.dataset.turnAlerts || 0) + 1);
  }

  show() {
    document.title = (this.yours ? BADGE : "") + this.baseTitle;
    const key = this.yours ? "badge" : "plain";
    this.icons[key] = this.icons[key] || iconUrl(this.yours);
    let link = document.querySelector("link[rel~='icon']");
    if (!link) { link = h("link", { rel: "icon" }); document.head.append(link); }
    if (link.getAttribute("href") !== this.icons[key]) link.setAttribute("href", this.icons[key]);
    link.dataset.badge = this.yours ? "your-turn" : "";
    document.body.dataset.yourTurn = this.yours ? "yes" : "no";
  }

  beep() {
    try {
      const ctx = this.audio || (this.audio = new AudioContext());
      if (ctx.state === "suspended") ctx.resume();
      const tone = ctx.createOscillator();
      const gain = ctx.createGain();
      tone.type = "sine";
      tone.frequency.value = 880;
      gain.gain.setValueAtTime(0.0001, ctx.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.2, ctx.currentTime + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, ctx.currentTime + 0.25);
      tone.connect(gain).connect(ctx.destination);
      tone.start();
      tone.stop(ctx.currentTime + 0.3);
    } catch { /* no audio on this browser: the title and icon still say it */ }
  }

  async toggleSound() {
    this.prefs.sound = !this.prefs.sound;
    keepPrefs(this.prefs);
    // the click is the user gesture a browser wants before it lets a page make a sound
    if (this.prefs.sound) this.beep();
    this.draw();
  }

  async toggleNotify() {
    if (this.prefs.notify) {
      this.prefs.notify = false;
    } else if (!("Notification" in window)) {
      toast("This browser cannot show notifications.", true);
    } else {
      const permission = Notification.permission === "default" ? await Notification.requestPermission() : Notification.permission;
      if (permission === "granted") this.prefs.notify = true;
      else toast("Notifications are blocked for this site: allow them in the browser's site settings.", true);
    }
    keepPrefs(this.prefs);
    this.draw();
  }

  draw() {
    const focused = this.el.contains(document.activeElement) ? document.activeElement.id : null;
    replace(this.el,
      h("button", { type: "button", class: "toggle", id: "alert-sound", "aria-pressed": String(this.prefs.sound),
        title: "A beep (and a vibration on phones) when it becomes your turn", onclick: () => this.toggleSound() },
      this.prefs.sound ? "Sound: on" : "Sound: off"),
      h("button", { type: "button", class: "toggle", id: "alert-notify", "aria-pressed": String(this.prefs.notify),
        title: "A browser notification when it becomes your turn while this tab is in the background",
        onclick: () => this.toggleNotify() },
      this.prefs.notify ? "Alert me: on" : "Alert me"));
    if (focused) document.getElementById(focused)?.focus();
  }
}
