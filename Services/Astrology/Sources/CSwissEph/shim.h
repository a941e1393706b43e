// The Swiss Ephemeris from Debian's libswe-dev (AGPL-3.0): linked by the astrology service only.
#include <swephexp.h>
