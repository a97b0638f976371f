#include "CPNG.h"
