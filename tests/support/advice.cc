// SPDX-License-Identifier: GPL-3.0-or-later
#include "support/advice.h"

#include <gtest/gtest.h>

#include <regex>

namespace partalign::test {

std::string AdviceIn(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) {
    ADD_FAILURE() << "no advice matching /" << pattern << "/ in:\n" << text;
    return "";
  }
  return m[1];
}

}  // namespace partalign::test
