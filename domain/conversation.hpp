#pragma once

// Conversations: the form of their ids, the earlier turns a follow-up may
// read, and those turns as a prompt's history block.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "domain/types.hpp"

namespace candor::domain {

/// "c_" and 32 lowercase hex digits: what candor hands out, and the only
/// form `conversationId` accepts.
bool valid_conversation_id(std::string_view id) noexcept;

/// The turns a follow-up may read, oldest first: the newest `max_turns` of
/// those that were answered or refused (or `asked`: a chat client's). A blocked turn, or one that ended
/// in an error, never reaches a prompt: what a guard stopped once is not
/// handed to a model as context later.
std::vector<turn> readable_history(std::vector<turn> turns, size_t max_turns);

/// The question a follow-up is read against: the standalone form of the
/// newest readable turn (empty without history).
std::string previous_question(const std::vector<turn>& history);

/// The status of a turn a chat client sent as an earlier message: asked,
/// its reading and outcome unknown to candor.
inline constexpr std::string_view asked_status = "asked";

/// What a follow-up is read against, in order: the previous question (its
/// standalone form) when every turn was read by candor; otherwise (a chat
/// client's earlier messages) every earlier question, to be read in turn.
std::vector<std::string> questions_to_resolve(const std::vector<turn>& history);

/// `history` as a prompt reads it, each text escaped:
/// `<history><turn><question>...</question><answer>...</answer></turn>...
/// </history>` with the SQL of a data turn as `<sql>`. Empty without
/// history. Answers are cut to `answer_chars` characters.
std::string history_block(const std::vector<turn>& history,
                          size_t answer_chars = 600);

/// `GET /conversations/{id}`: {"conversationId", "turns": [{"requestId",
/// "question", "standaloneQuestion" (null when the question stood alone),
/// "route", "status", "answer", "sql" (null without one), "receivedUs"}]}
/// oldest first.
std::string conversation_json(const std::string& id,
                              const std::vector<turn>& turns);

} // namespace candor::domain
