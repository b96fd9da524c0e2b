// tests/common/expect_error.hpp -- the assertion of the error tests: a call
// must throw segred::error whose message contains every given part.
#pragma once

#include <exception>
#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include <segred/segred.hpp>

namespace segtest {

template <class F>
void expect_error(F&& f, std::initializer_list<const char*> parts) {
    try {
        f();
        ADD_FAILURE() << "no segred::error was thrown";
    } catch (const segred::error& e) {
        const std::string what = e.what();
        for (const char* p : parts)
            EXPECT_NE(what.find(p), std::string::npos) << "message \"" << what << "\" lacks \"" << p << "\"";
    } catch (const std::exception& e) {
        ADD_FAILURE() << "threw something other than segred::error: " << e.what();
    }
}

} // namespace segtest
