// Debian installs hiredis under /usr/include/hiredis; module-map header paths are relative, hence this shim.
#include <hiredis/hiredis.h>
