// SPDX-License-Identifier: GPL-3.0-or-later
// The options every program of a sanitized build (-DPARTALIGN_SANITIZE=ON: the CI build) runs
// with, however it is started: by ctest, by a test as a subprocess, or by hand. ASan and UBSan
// read these hooks before the environment's ASAN_OPTIONS and UBSAN_OPTIONS, which can still
// override any of them.
//
// abort_on_error: a report kills the process with SIGABRT. ASan's and UBSan's own exit status
// is 1, partalign's "error", which a test expecting a refusal could take for one.
// detect_leaks: on in the unit tests and fuzz harnesses (PARTALIGN_SANITIZE_LEAKS=1), off in
// partalign and the device tests, where what libblkid, libfdisk and libparted still hold at
// exit is not a finding about partalign.
// suppressions: tests/sanitize/asan.supp, bugs inside the libraries partalign links only.
// verify_asan_link_order=0: the explain tests run partalign with the topology simulator
// preloaded (LD_PRELOAD, tests/support/topology_shim.c, uninstrumented), ahead of ASan's
// runtime, which ASan otherwise refuses to start with.

#ifndef PARTALIGN_SANITIZE_LEAKS
#error "PARTALIGN_SANITIZE_LEAKS must be 0 or 1"
#endif
#ifndef PARTALIGN_ASAN_SUPPRESSIONS
#error "PARTALIGN_ASAN_SUPPRESSIONS must name tests/sanitize/asan.supp"
#endif

#define PARTALIGN_STRINGIFY2(x) #x
#define PARTALIGN_STRINGIFY(x) PARTALIGN_STRINGIFY2(x)

extern "C" {

const char* __asan_default_options();
const char* __ubsan_default_options();

const char* __asan_default_options() {
  return "abort_on_error=1:verify_asan_link_order=0:detect_leaks=" PARTALIGN_STRINGIFY(
      PARTALIGN_SANITIZE_LEAKS) ":suppressions=" PARTALIGN_ASAN_SUPPRESSIONS;
}

const char* __ubsan_default_options() {
  return "abort_on_error=1:halt_on_error=1:print_stacktrace=1";
}

}  // extern "C"
