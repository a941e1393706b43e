# What `make up` starts the stack with: the caller's environment first, then `local.env` (not committed; see
# local.env.example), then the development defaults. Sourced by scripts/up.sh; the functions are tested on their
# own (DeploymentTests, "make up respects the caller's settings").

# load_local_settings FILE: exports each `NAME=value` line of FILE whose NAME the environment does not set yet
# (blank lines and `#` comments skipped; the value is taken as written, no quotes or expansion).
load_local_settings() {
  local file="$1" line name value
  [ -f "$file" ] || return 0
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    case "$line" in ''|'#'*) continue ;; esac
    name="${line%%=*}"; value="${line#*=}"
    name="${name#export }"; name="${name%"${name##*[![:space:]]}"}"
    [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "$file: '$line' is not NAME=value"
    [ -n "${!name+set}" ] || export "$name=$value"
  done < "$file"
}

# default_setting NAME VALUE: exports NAME=VALUE unless the caller (or local.env) set NAME.
default_setting() {
  [ -n "${!1+set}" ] || export "$1=$2"
}

# default_signin_providers DEV_URL: Google and Apple sign-in go to the development identity provider at DEV_URL,
# each only where the caller configured nothing for it: a team that sets GOOGLE_CLIENT_IDS (its real iOS app) gets
# Google's own key set (or its GOOGLE_JWKS_URL), and Apple stays on the development provider unless set too.
default_signin_providers() {
  local dev="$1"
  if [ -z "${GOOGLE_CLIENT_IDS+set}${GOOGLE_JWKS_URL+set}" ]; then
    export GOOGLE_CLIENT_IDS="lantern-dev.apps.googleusercontent.com" GOOGLE_JWKS_URL="$dev/google/jwks.json"
  fi
  if [ -z "${APPLE_CLIENT_IDS+set}${APPLE_JWKS_URL+set}" ]; then
    export APPLE_CLIENT_IDS="app.lantern.dev" APPLE_JWKS_URL="$dev/apple/jwks.json"
  fi
}

# signin_summary DEV_URL: one line per provider, as `make status` shows it (written next to the pids by up.sh).
signin_summary() {
  local dev="$1" provider ids url
  for provider in GOOGLE APPLE; do
    ids="${provider}_CLIENT_IDS"; url="${provider}_JWKS_URL"
    if [ -z "${!ids:-}" ]; then
      echo "$provider off (no ${provider}_CLIENT_IDS)"
    elif [[ "${!url:-}" == "$dev/"* ]]; then
      echo "$provider development provider ($dev) for ${!ids}"
    elif [ -n "${!url:-}" ]; then
      echo "$provider key set ${!url} for ${!ids}"
    else
      echo "$provider ${provider,,}'s own key set for ${!ids}"
    fi
  done
}

# default_operator_keys FILE: RoastMeLater's operator API gets one development operator, `local`, whose key is
# made once into FILE (kept across restarts), unless the caller set ROASTMELATER_OPERATOR_KEYS.
default_operator_keys() {
  local file="$1"
  [ -z "${ROASTMELATER_OPERATOR_KEYS+set}" ] || return 0
  if [ ! -s "$file" ]; then
    mkdir -p "$(dirname "$file")"
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$file")
  fi
  export ROASTMELATER_OPERATOR_KEYS="local:$(cat "$file")"
}
