// Intentionally empty: the declaration in include/CFuzzDriver.h is all this target provides;
// LLVMFuzzerRunDriver itself comes from libFuzzer's runtime.
#include "CFuzzDriver.h"
