#ifndef WEBIMAGE_FUZZ_DRIVER_H
#define WEBIMAGE_FUZZ_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that own `main` (compiler-rt, LLVM 12+).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
