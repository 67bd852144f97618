#include "common/text_table.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

TEST(TextTableTest, PadsColumnsToTheirWidestCellTwoSpacesApartWithoutTrailingSpaces) {
  EXPECT_EQ(RenderTextTable({"NAME", "STATE"}, {{"train-llm", "Running"}, {"x", ""}}),
            "NAME       STATE\n"
            "train-llm  Running\n"
            "x\n");
}

TEST(TextTableTest, AlignsColumnsRightWhereAskedAndOthersAsTheRest) {
  EXPECT_EQ(RenderTextTable({"POLICY", "SEEDS", "ALLOC"}, {{"fgd", "3", "91.25"}, {"binpack", "12", "9.5"}},
                            LeftThenRight(1)),
            "POLICY   SEEDS  ALLOC\n"
            "fgd          3  91.25\n"
            "binpack     12    9.5\n");
}

TEST(TextTableTest, DrawsARuleUnderTheHeaderAsWideAsEachColumn) {
  TextTableStyle style;
  style.align = {CellAlign::kLeft, CellAlign::kRight};
  style.rule = true;
  EXPECT_EQ(RenderTextTable({"QUEUE", "H"}, {{"q", "12.5"}}, style),
            "QUEUE     H\n"
            "-----  ----\n"
            "q      12.5\n");
}

TEST(TextTableTest, TheHeaderNamesTheColumnsShortRowsGetEmptyCellsLongRowsAreCut) {
  EXPECT_EQ(RenderTextTable({"A", "B"}, {{"1"}, {"22", "x", "dropped"}}),
            "A   B\n"
            "1\n"
            "22  x\n");
  EXPECT_EQ(RenderTextTable({"A"}, {}), "A\n");
}

// A cell a client wrote (a cancel reason, a label value) reaches no terminal raw: an escape
// sequence that would recolour or retitle an admin's terminal, a carriage return that would
// overwrite the line, a newline that would forge a row (the probe of 2026-12-07).
TEST(TextTableTest, ControlCharactersInCellsAreEscaped) {
  EXPECT_EQ(RenderTextTable({"NAME", "REASON"}, {{"w", "ok\x1b]0;pwned\x07\r\nfake row"}}),
            "NAME  REASON\n"
            "w     ok\\x1b]0;pwned\\x07\\r\\nfake row\n");
}

}  // namespace
}  // namespace abacus
