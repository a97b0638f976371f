#include <sys/time.h>
#include <hiredis/hiredis.h>
