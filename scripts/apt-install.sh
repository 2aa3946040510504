# Sourced by the scripts/install-*.sh scripts: install one Debian package with apt-get.
#
#   source "$(dirname "$0")/apt-install.sh"
#   apt_install <script name> <package> <what to have on the PATH if installed by hand>
#
# Uses sudo -n when not root; refreshes the package lists first only when apt does not know
# the package yet (a fresh image), and once more when the install fails (stale lists name
# versions the mirror no longer has). --no-install-recommends keeps system services such as
# zookeeperd out: the tests start their own servers. Exits 1 with what to do by hand when
# neither root nor sudo nor apt-get is there.

apt_install() {
    local who=$1 package=$2 by_hand=$3
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "$who: not root and no sudo; install it yourself: apt-get install $package" >&2
            exit 1
        fi
        sudo=(sudo -n)
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$who: apt-get not found; this script supports Debian/Ubuntu only;" \
            "install $package yourself so that $by_hand" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-cache show "$package" >/dev/null 2>&1; then
        echo "$who: running apt-get update"
        "${sudo[@]}" apt-get update -qq
    fi
    echo "$who: installing Debian package '$package' with apt-get"
    if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$package" >/dev/null; then
        echo "$who: install failed; running apt-get update and retrying"
        "${sudo[@]}" apt-get update -qq
        "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$package" >/dev/null
    fi
    echo "$who: installed $(dpkg-query -W -f='${Package} ${Version}' "$package")"
}
