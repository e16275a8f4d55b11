// SPDX-License-Identifier: GPL-3.0-or-later
// The interactive planner's state machine: the keys of `plan --interactive` (docs/interactive.md),
// the prompts they open, undo, the assumed topology `a` cycles through, and the effects the
// terminal adapter carries out (write an exported file, apply a plan, quit). Pure: it never
// touches a file or a terminal, so unit tests drive it key by key and read what it draws
// (planner_render.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "partalign/interactive/planner_model.h"
#include "partalign/tools/tool_version.h"
#include "partalign/topology/topology_spec.h"

namespace partalign {

/// kInterrupt: Ctrl-C (the terminal is in raw mode: it is a key, not a signal).
enum class KeyCode { kChar, kUp, kDown, kEnter, kBackspace, kEscape, kInterrupt, kOther };

struct Key {
  KeyCode code = KeyCode::kOther;
  char ch = 0;
  static Key Char(char c) { return {KeyCode::kChar, c}; }
  static Key Of(KeyCode code) { return {code, 0}; }
};

/// What the adapter must do after a key.
struct PlannerEffect {
  enum class Kind { kNone, kWriteFile, kApply, kQuit };
  Kind kind = Kind::kNone;
  std::string path;          ///< kWriteFile
  std::string content;       ///< kWriteFile; kQuit: how the planner was left ("q", "Ctrl-C")
  std::optional<Plan> plan;  ///< kApply
  /// kQuit: the edits not written ("2 moving 80 MiB of data"), empty when there are none.
  std::string dropped;
};

/// kExplain: the selected row in full (`x`): its place, its change and plan's reason, every
/// tool's verdict, what `w` would do.
enum class PlannerMode { kList, kPrompt, kHelp, kPlacement, kExplain };

/// kConfirmQuit and kConfirmMakeRoom take one key (y quits, y takes the room offered); the
/// others a line and Enter.
enum class PromptKind {
  kNewSize,
  kNewType,
  kResize,
  kMove,
  kType,
  kExportPath,
  kConfirmWrite,
  kConfirmQuit,
  kConfirmMakeRoom
};

class PlannerScreen {
 public:
  PlannerScreen(PlannerModel model, std::vector<TopologyProfile> profiles, ToolVersions versions);

  PlannerEffect Handle(const Key& key);
  /// The outcome of an effect, for the message line ("wrote 'plan.json'").
  void Report(std::string message) { message_ = std::move(message); }
  /// The layout just exported was written to a file: quitting no longer drops it unsaved.
  void MarkExported() { exported_ = model_.layout(); }
  /// The layout differs from the disk and from the last export: `q` asks first.
  bool HasUnsavedEdits() const;
  /// After an apply: the disk as it is now (undo history is dropped).
  void Replace(PlannerModel model);

  const PlannerModel& model() const { return model_; }
  std::vector<PlannerRow> rows() const { return model_.Rows(); }
  size_t selected() const { return selected_; }
  PlannerMode mode() const { return mode_; }
  PromptKind prompt() const { return prompt_; }
  const std::string& input() const { return input_; }
  /// The question of the open prompt.
  std::string PromptText() const;
  const std::string& message() const { return message_; }
  /// The topology verdicts are shown for: the disk's, or the profile `a` chose.
  const Topology& shown_topology() const { return shown_; }
  /// "" for the disk's own topology, else the profile name.
  std::string profile_name() const;
  std::string profile_description() const;
  const ToolVersions& versions() const { return versions_; }
  /// The first line shown of the help or placement page (Up/Down scroll it).
  size_t page_line() const { return page_line_; }

 private:
  PlannerEffect HandleList(const Key& key);
  PlannerEffect Quit(const Key& key);
  PlannerEffect Submit();
  void Open(PromptKind kind);
  /// Runs an edit, keeping the layout before it for `u`; false (and the message says why)
  /// when the edit is refused.
  bool Edit(const std::function<Status(PlannerModel&)>& edit);
  void CycleTopology();
  std::optional<PlannerRow> SelectedRow() const;
  void SelectPartitionAt(uint64_t start_bytes);
  void ClampSelection();

  PlannerModel model_;
  std::vector<TopologyProfile> profiles_;
  ToolVersions versions_;
  std::optional<size_t> profile_;
  Topology shown_;
  size_t selected_ = 0;
  size_t page_line_ = 0;
  PlannerMode mode_ = PlannerMode::kList;
  PromptKind prompt_ = PromptKind::kNewSize;
  std::string input_;
  std::string pending_size_;  ///< `n`: the size typed, while the type is asked
  std::string message_;
  std::vector<PlannerLayout> undo_;
  /// The layout of the disk as loaded (or as apply left it), and as last exported.
  PlannerLayout loaded_;
  std::optional<PlannerLayout> exported_;
  /// The key that opened kConfirmQuit ("q", "Ctrl-C").
  std::string quit_key_;
  /// `M`: the room offered, while kConfirmMakeRoom asks.
  std::optional<PlannerModel::RoomOffer> room_offer_;
};

}  // namespace partalign
