// Every operator new of a test program counts here (allocation_count.cpp, in every test program
// through om_test_main), so a test can say a run allocated nothing.
#pragma once

#include <atomic>
#include <cstddef>

extern std::atomic<size_t> g_allocations;
