"""The command line's own credentials: the personal tokens `speculation login` made, one per
API URL, in `$XDG_CONFIG_HOME/speculation/credentials.json` (default
`~/.config/speculation/credentials.json`).

The folder is made 0700 and the file is only ever written as a new file opened 0600 and then
renamed over the old one, so a token is never readable by another user, not even for an
instant. The file holds {"credentials": {api: {"api", "username", "token", "token_id"}},
"devices": {api: {username: device}}}: a device value is what sign-in gives back to pass the
sign-in lock on a device the owner used before (docs/accounts.md), kept past a logout.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

FILE_NAME = "credentials.json"


def config_dir() -> Path:
    """$XDG_CONFIG_HOME/speculation, or ~/.config/speculation (the XDG rule: a relative or
    empty XDG_CONFIG_HOME is ignored)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "speculation"


def credentials_path() -> Path:
    return config_dir() / FILE_NAME


def api_key(api: str) -> str:
    """One entry per API: its URL without a trailing slash."""
    return api.strip().rstrip("/")


def _load() -> dict:
    path = credentials_path()
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return {"credentials": {}, "devices": {}}
    except (OSError, ValueError) as err:
        raise CredentialsError(f"{path}: cannot read the stored credentials ({err}); remove the file and "
                               "run `speculation login` again") from None
    if mode & 0o077:
        print(f"warning: {path} is readable by other users (mode {mode:04o}); run chmod 600 on it",
              file=sys.stderr)
    if not isinstance(data, dict):
        data = {}
    data.setdefault("credentials", {})
    data.setdefault("devices", {})
    return data


def _save(data: dict) -> None:
    folder = config_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if stat.S_IMODE(folder.stat().st_mode) & 0o077:
            os.chmod(folder, 0o700)
    except OSError:
        pass
    path = folder / FILE_NAME
    temporary = folder / f".{FILE_NAME}.{os.getpid()}.tmp"
    try:
        os.unlink(temporary)
    except FileNotFoundError:
        pass
    # O_EXCL: a new file, created 0600 (the umask can only take bits away); never a link.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class CredentialsError(Exception):
    pass


def stored(api: str) -> dict | None:
    """The entry for this API ({"api", "username", "token", "token_id"}), or None."""
    entry = _load()["credentials"].get(api_key(api))
    return entry if isinstance(entry, dict) and entry.get("token") else None


def store(api: str, username: str, token: str, token_id: str, device: str | None = None) -> Path:
    data = _load()
    key = api_key(api)
    data["credentials"][key] = {"api": key, "username": username, "token": token, "token_id": token_id}
    if device:
        data["devices"].setdefault(key, {})[username.casefold()] = device
    _save(data)
    return credentials_path()


def forget(api: str) -> bool:
    """Remove this API's token from the file; False when there was none."""
    data = _load()
    if data["credentials"].pop(api_key(api), None) is None:
        return False
    _save(data)
    return True


def device(api: str, username: str) -> str | None:
    """The device value a sign-in to this API as this username gave before (passes the lock)."""
    return _load()["devices"].get(api_key(api), {}).get(username.casefold())
