// SPDX-License-Identifier: GPL-3.0-or-later
#include "cli/move/unfinished_move.h"

#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/device/target.h"
#include "io/move/mover.h"
#include "partalign/util/shell_quote.h"

namespace partalign {

Result<std::vector<UnfinishedMove>> FindUnfinishedMoves(const std::string& path) {
  std::vector<UnfinishedMove> moves;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !(S_ISBLK(st.st_mode) || S_ISREG(st.st_mode))) {
    return moves;
  }
  Result<Target> target = OpenTarget(path);
  if (!target) return moves;  // the command itself says why it cannot open it
  Result<JournalDevice> device = DescribeMoveDevice(*target);
  if (!device) return moves;  // a partition, or nothing a move is made on
  Result<std::vector<RegisteredJournal>> found = FindUnfinishedJournals(*device);
  if (!found) return found.error();
  for (const RegisteredJournal& j : *found) {
    UnfinishedMove m{j.entry.journal_path, "unreadable", !j.entry_path.empty()};
    if (Result<JournalSummary> summary = InspectJournal(j.entry.journal_path)) {
      m.state = summary->state ? ToString(summary->state->phase) : "not started";
    } else if (j.entry.starting) {
      m.state = "starting, never wrote the disk";
    }
    moves.push_back(std::move(m));
  }
  return moves;
}

namespace {

// The command that finishes it: by the disk when it has one move, by the journal otherwise.
std::string ResumeArgument(const std::string& path, const std::vector<UnfinishedMove>& moves,
                           const UnfinishedMove& m) {
  return moves.size() == 1 ? path : m.journal;
}

}  // namespace

std::vector<std::string> UnfinishedMoveLines(const std::string& path,
                                             const std::vector<UnfinishedMove>& moves) {
  std::vector<std::string> lines;
  for (const UnfinishedMove& m : moves) {
    const std::string arg = ResumeArgument(path, moves, m);
    lines.push_back(fmt::format(
        "'{}' has an unfinished data move (journal '{}', state {}{}): its partitions are half "
        "moved and nothing read from them now describes the old layout or the new one. Finish "
        "it first: partalign resume {} (or undo it: partalign resume --rollback {})",
        path, m.journal, m.state, m.registered ? "" : ", not in the registry", ShellQuote(arg),
        ShellQuote(arg)));
  }
  return lines;
}

nlohmann::json UnfinishedMovesJson(const std::string& path,
                                   const std::vector<UnfinishedMove>& moves) {
  nlohmann::json out = nlohmann::json::array();
  for (const UnfinishedMove& m : moves) {
    const std::string arg = ResumeArgument(path, moves, m);
    out.push_back({{"journal", m.journal},
                   {"state", m.state},
                   {"registered", m.registered},
                   {"resume", "partalign resume " + ShellQuote(arg)},
                   {"rollback", "partalign resume --rollback " + ShellQuote(arg)}});
  }
  return out;
}

std::optional<std::vector<UnfinishedMove>> CheckUnfinishedMoves(Streams io, const std::string& path,
                                                                bool refuse) {
  Result<std::vector<UnfinishedMove>> moves = FindUnfinishedMoves(path);
  if (!moves) {
    PrintWarning(io.err, fmt::format("cannot tell whether '{}' has an unfinished data move: {}",
                                     path, moves.error().message));
    return std::nullopt;
  }
  if (moves->empty()) return std::nullopt;
  for (const std::string& line : UnfinishedMoveLines(path, *moves)) {
    if (refuse) {
      PrintError(io.err, line);
    } else {
      PrintWarning(io.err, line);
    }
  }
  return std::move(*moves);
}

bool RefuseIfUnfinished(Streams io, const std::string& path, bool json) {
  std::optional<std::vector<UnfinishedMove>> moves = CheckUnfinishedMoves(io, path, true);
  if (!moves) return false;
  if (json) {
    io.out << nlohmann::json{{"target", path},
                             {"refused", "the disk has an unfinished data move"},
                             {"unfinished_moves", UnfinishedMovesJson(path, *moves)}}
                  .dump(2)
           << '\n';
  }
  return true;
}

}  // namespace partalign
