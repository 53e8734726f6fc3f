"""Four programs of LangGraph's 0.2/0.3-era tutorials, ported as their authors wrote them and
run on both engines.

- docs/docs/tutorials/customer-support/customer-support.ipynb: the Swiss Airlines support
  bot, parts 1-4 (zero-shot agent with tools; `interrupt_before=["tools"]` with user
  approval; safe vs sensitive tools; specialized workflows with a `dialog_state` stack, entry
  nodes, `CompleteOrEscalate`, `leave_skill` and `route_to_workflow`);
- docs/docs/tutorials/chatbot-simulation-evaluation/agent-simulation-evaluation.ipynb: a
  simulated user and a chat bot talking in a loop until "FINISHED" or a message count;
- docs/docs/tutorials/chatbots/information-gather-prompting.ipynb: gather requirements, then
  generate a prompt on a tool call (a node answers the call with a `ToolMessage`);
- docs/docs/tutorials/code_assistant/langgraph_code_assistant.ipynb: generate, exec-check,
  optionally reflect, up to `max_iterations`.

Replaced: the travel database by a small sqlite3 database in memory (a shared-cache URI, so
the tools can still `sqlite3.connect(db)` on each call) that each run builds; the FAQ
embeddings by a keyword retriever; Tavily by a canned search tool; every LLM by `Scripted`
(`bind_tools` returns itself, tokens stream word by word); `datetime.now` in the prompts by a
fixed clock; pytz by a fixed UTC+3 offset. The interrupt loops answer from a list instead of
`input()`. Streams (`values`, `updates`, `messages`), results, `get_state` and
`get_state_history` are compared on each engine's own in-memory and SQLite savers, sync
and async. Beyond the notebooks' own loops: refusals by `update_state` (with and without
`as_node`), time travel to a pause, the `dialog_state` stack edited by hand, a thread paused
by one engine and resumed by the other on LangGraph's SQLite saver, the `tasks` and
`checkpoints` streams, the graph drawings, and the code assistant's in-place list sharing.

No `from __future__ import annotations`: tool and state annotations are read at runtime.
"""

# ruff: noqa: UP006, UP035 - the tutorials write typing.List

import copy
import itertools
import re
import sqlite3
from datetime import date, datetime, timedelta, timezone
from typing import Annotated, Callable, List, Literal, Optional, Union

import pytest
from _agent_scenarios import asaver, calls, replies, saver, say
from _diff import Engine, acollect, collect, snapshot_summary
from _scripted import Scripted
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

PASSENGER = "3442 587242"
TICKET = "7240005432906569"


def _plain(m):
    if isinstance(m, BaseMessage):
        return (m.type, m.content, m.name, getattr(m, "tool_call_id", None))
    return m


def _summary(s):
    """A snapshot as `snapshot_summary` shows it, task results' messages without ids (LangGraph
    saves a task's writes in the background while `add_messages` gives new messages their ids
    in place, so whether a saved write has them varies from run to run on LangGraph); a
    result's `messages` may be one message, a list, or the tutorial's `("user", text)`."""
    out = snapshot_summary(s)
    tasks = []
    for name, path, interrupts, result, state in out["tasks"]:
        if isinstance(result, dict) and "messages" in result:
            ms = result["messages"]
            ms = [_plain(m) for m in ms] if isinstance(ms, list) else _plain(ms)
            result = {**result, "messages": ms}
        tasks.append((name, path, interrupts, result, state))
    out["tasks"] = tasks
    return out


def history(app, cfg):
    return [_summary(s) for s in app.get_state_history(cfg)]


async def ahistory(app, cfg):
    return [_summary(s) async for s in app.aget_state_history(cfg)]


def _llm(*steps, structured=()):
    return Scripted(script=replies(*steps), structured=iter(list(structured)), seen=[])


def _now():
    """The prompts' `.partial(time=datetime.now)`, frozen."""
    return datetime(2024, 4, 25, 9, 0)


# --- the travel database (in memory) and the tutorial's tools ---------------------------------

_dbs = itertools.count()


def _travel_db():
    """A fresh shared-cache in-memory database; returns its URI and the connection that keeps
    it alive (close it at the end of the run)."""
    db = f"file:travel{next(_dbs)}?mode=memory&cache=shared"
    keep = sqlite3.connect(db, uri=True, check_same_thread=False)
    keep.executescript("""
        CREATE TABLE flights (flight_id INTEGER PRIMARY KEY, flight_no TEXT, departure_airport TEXT,
            arrival_airport TEXT, scheduled_departure TEXT, scheduled_arrival TEXT);
        CREATE TABLE tickets (ticket_no TEXT, book_ref TEXT, passenger_id TEXT);
        CREATE TABLE ticket_flights (ticket_no TEXT, flight_id INTEGER, fare_conditions TEXT);
        CREATE TABLE boarding_passes (ticket_no TEXT, flight_id INTEGER, seat_no TEXT);
        CREATE TABLE car_rentals (id INTEGER PRIMARY KEY, name TEXT, location TEXT, price_tier TEXT,
            start_date TEXT, end_date TEXT, booked INTEGER);
        CREATE TABLE hotels (id INTEGER PRIMARY KEY, name TEXT, location TEXT, price_tier TEXT,
            checkin_date TEXT, checkout_date TEXT, booked INTEGER);
        CREATE TABLE trip_recommendations (id INTEGER PRIMARY KEY, name TEXT, location TEXT,
            keywords TEXT, details TEXT, booked INTEGER);
        INSERT INTO flights VALUES
            (1, 'LX0112', 'CDG', 'BSL', '2099-04-30 09:00:00.000000+03:00', '2099-04-30 10:00:00.000000+03:00'),
            (2, 'LX0114', 'CDG', 'BSL', '2099-05-07 09:00:00.000000+03:00', '2099-05-07 10:00:00.000000+03:00'),
            (3, 'LX0116', 'CDG', 'BSL', '2020-01-01 09:00:00.000000+03:00', '2020-01-01 10:00:00.000000+03:00'),
            (4, 'LX0118', 'CDG', 'BSL', 'TBD', 'TBD');
        INSERT INTO tickets VALUES ('7240005432906569', 'C46E9F', '3442 587242'),
                                   ('0000000000000001', 'AAAAAA', '1111 111111');
        INSERT INTO ticket_flights VALUES ('7240005432906569', 1, 'Economy'), ('0000000000000001', 1, 'Business');
        INSERT INTO boarding_passes VALUES ('7240005432906569', 1, '18E'), ('0000000000000001', 1, '2A');
        INSERT INTO car_rentals VALUES (1, 'Europcar', 'Basel', 'Economy', '2024-04-14', '2024-04-11', 0),
            (2, 'Avis', 'Basel', 'Luxury', '2024-04-10', '2024-04-20', 0),
            (3, 'Hertz', 'Zurich', 'Midsize', '2024-04-10', '2024-04-07', 0);
        INSERT INTO hotels VALUES (1, 'Hilton Basel', 'Basel', 'Luxury', '2024-04-22', '2024-04-20', 0),
            (2, 'Hyatt Regency Basel', 'Basel', 'Upper Upscale', '2024-04-02', '2024-04-20', 0);
        INSERT INTO trip_recommendations VALUES
            (1, 'Basel Minster', 'Basel', 'landmark, history', 'Visit the historic Basel Minster.', 0),
            (2, 'Kunstmuseum Basel', 'Basel', 'art, museum', 'Explore the world-class art collection.', 0);
    """)
    keep.commit()
    return db, keep


def _dump(keep):
    """What the run left in the database."""
    return {t: keep.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
            for t in ("ticket_flights", "car_rentals", "hotels", "trip_recommendations")}


FAQ = """## Invoice Questions
An invoice is issued for every booking.
## Booking and Cancellation
Changes to a flight booking are permitted up to 3 hours before departure, for a fee.
## Rebooking policy
A flight may be rebooked to a later flight for a fee; sooner flights need a new ticket."""


class VectorStoreRetriever:
    """The tutorial's retriever, scoring by shared words instead of OpenAI embeddings."""

    def __init__(self, docs: list):
        self._docs = docs

    def query(self, query: str, k: int = 5) -> list[dict]:
        words = set(query.lower().split())
        scores = [len(words & set(d["page_content"].lower().split())) for d in self._docs]
        top = sorted(range(len(self._docs)), key=lambda i: (-scores[i], i))[:k]
        return [{**self._docs[i], "similarity": scores[i]} for i in top]


def _travel_tools(db):
    """The tutorial's tools (cells 7-15), on the database `db`."""
    retriever = VectorStoreRetriever([{"page_content": txt} for txt in re.split(r"(?=\n##)", FAQ)])

    def connect():
        return sqlite3.connect(db, uri=True)

    @tool
    def tavily_search_results_json(query: str) -> list[dict]:
        """A search engine optimized for comprehensive, accurate, and trusted results."""
        return [{"url": "https://example.com/search", "content": f"Top result for {query}"}]

    @tool
    def lookup_policy(query: str) -> str:
        """Consult the company policies to check whether certain options are permitted.
        Use this before making any flight changes performing other 'write' events."""
        docs = retriever.query(query, k=2)
        return "\n\n".join([doc["page_content"] for doc in docs])

    @tool
    def fetch_user_flight_information(config: RunnableConfig) -> list[dict]:
        """Fetch all tickets for the user along with corresponding flight information and seat assignments.

        Returns:
            A list of dictionaries where each dictionary contains the ticket details,
            associated flight details, and the seat assignments for each ticket belonging to the user.
        """
        configuration = config.get("configurable", {})
        passenger_id = configuration.get("passenger_id", None)
        if not passenger_id:
            raise ValueError("No passenger ID configured.")

        conn = connect()
        cursor = conn.cursor()

        query = """
        SELECT
            t.ticket_no, t.book_ref,
            f.flight_id, f.flight_no, f.departure_airport, f.arrival_airport, f.scheduled_departure, f.scheduled_arrival,
            bp.seat_no, tf.fare_conditions
        FROM
            tickets t
            JOIN ticket_flights tf ON t.ticket_no = tf.ticket_no
            JOIN flights f ON tf.flight_id = f.flight_id
            JOIN boarding_passes bp ON bp.ticket_no = t.ticket_no AND bp.flight_id = f.flight_id
        WHERE
            t.passenger_id = ?
        """
        cursor.execute(query, (passenger_id,))
        rows = cursor.fetchall()
        column_names = [column[0] for column in cursor.description]
        results = [dict(zip(column_names, row)) for row in rows]

        cursor.close()
        conn.close()

        return results

    @tool
    def search_flights(
        departure_airport: Optional[str] = None,
        arrival_airport: Optional[str] = None,
        start_time: Optional[date | datetime] = None,
        end_time: Optional[date | datetime] = None,
        limit: int = 20,
    ) -> list[dict]:
        """Search for flights based on departure airport, arrival airport, and departure time range."""
        conn = connect()
        cursor = conn.cursor()

        query = "SELECT * FROM flights WHERE 1 = 1"
        params = []

        if departure_airport:
            query += " AND departure_airport = ?"
            params.append(departure_airport)

        if arrival_airport:
            query += " AND arrival_airport = ?"
            params.append(arrival_airport)

        if start_time:
            query += " AND scheduled_departure >= ?"
            params.append(str(start_time))

        if end_time:
            query += " AND scheduled_departure <= ?"
            params.append(str(end_time))
        query += " LIMIT ?"
        params.append(limit)
        cursor.execute(query, params)
        rows = cursor.fetchall()
        column_names = [column[0] for column in cursor.description]
        results = [dict(zip(column_names, row)) for row in rows]

        cursor.close()
        conn.close()

        return results

    @tool
    def update_ticket_to_new_flight(ticket_no: str, new_flight_id: int, *, config: RunnableConfig) -> str:
        """Update the user's ticket to a new valid flight."""
        configuration = config.get("configurable", {})
        passenger_id = configuration.get("passenger_id", None)
        if not passenger_id:
            raise ValueError("No passenger ID configured.")

        conn = connect()
        cursor = conn.cursor()

        cursor.execute(
            "SELECT departure_airport, arrival_airport, scheduled_departure FROM flights WHERE flight_id = ?",
            (new_flight_id,),
        )
        new_flight = cursor.fetchone()
        if not new_flight:
            cursor.close()
            conn.close()
            return "Invalid new flight ID provided."
        column_names = [column[0] for column in cursor.description]
        new_flight_dict = dict(zip(column_names, new_flight))
        tz = timezone(timedelta(hours=3))  # pytz.timezone("Etc/GMT-3")
        current_time = datetime.now(tz=tz)
        departure_time = datetime.strptime(new_flight_dict["scheduled_departure"], "%Y-%m-%d %H:%M:%S.%f%z")
        time_until = (departure_time - current_time).total_seconds()
        if time_until < (3 * 3600):
            return ("Not permitted to reschedule to a flight that is less than 3 hours from the current "
                    f"time. Selected flight is at {departure_time}.")

        cursor.execute("SELECT flight_id FROM ticket_flights WHERE ticket_no = ?", (ticket_no,))
        current_flight = cursor.fetchone()
        if not current_flight:
            cursor.close()
            conn.close()
            return "No existing ticket found for the given ticket number."

        # Check the signed-in user actually has this ticket
        cursor.execute("SELECT * FROM tickets WHERE ticket_no = ? AND passenger_id = ?", (ticket_no, passenger_id))
        current_ticket = cursor.fetchone()
        if not current_ticket:
            cursor.close()
            conn.close()
            return f"Current signed-in passenger with ID {passenger_id} not the owner of ticket {ticket_no}"

        cursor.execute("UPDATE ticket_flights SET flight_id = ? WHERE ticket_no = ?", (new_flight_id, ticket_no))
        conn.commit()

        cursor.close()
        conn.close()
        return "Ticket successfully updated to new flight."

    @tool
    def cancel_ticket(ticket_no: str, *, config: RunnableConfig) -> str:
        """Cancel the user's ticket and remove it from the database."""
        configuration = config.get("configurable", {})
        passenger_id = configuration.get("passenger_id", None)
        if not passenger_id:
            raise ValueError("No passenger ID configured.")
        conn = connect()
        cursor = conn.cursor()

        cursor.execute("SELECT flight_id FROM ticket_flights WHERE ticket_no = ?", (ticket_no,))
        existing_ticket = cursor.fetchone()
        if not existing_ticket:
            cursor.close()
            conn.close()
            return "No existing ticket found for the given ticket number."

        # Check the signed-in user actually has this ticket
        cursor.execute("SELECT ticket_no FROM tickets WHERE ticket_no = ? AND passenger_id = ?",
                       (ticket_no, passenger_id))
        current_ticket = cursor.fetchone()
        if not current_ticket:
            cursor.close()
            conn.close()
            return f"Current signed-in passenger with ID {passenger_id} not the owner of ticket {ticket_no}"

        cursor.execute("DELETE FROM ticket_flights WHERE ticket_no = ?", (ticket_no,))
        conn.commit()

        cursor.close()
        conn.close()
        return "Ticket successfully cancelled."

    def _search(table, location, name, keywords=None):
        conn = connect()
        cursor = conn.cursor()
        query = f"SELECT * FROM {table} WHERE 1=1"
        params = []
        if location:
            query += " AND location LIKE ?"
            params.append(f"%{location}%")
        if name:
            query += " AND name LIKE ?"
            params.append(f"%{name}%")
        if keywords:
            keyword_list = keywords.split(",")
            keyword_conditions = " OR ".join(["keywords LIKE ?" for _ in keyword_list])
            query += f" AND ({keyword_conditions})"
            params.extend([f"%{keyword.strip()}%" for keyword in keyword_list])
        cursor.execute(query, params)
        results = cursor.fetchall()
        conn.close()
        return [dict(zip([column[0] for column in cursor.description], row)) for row in results]

    def _set(sql, params, ok, missing):
        conn = connect()
        cursor = conn.cursor()
        cursor.execute(sql, params)
        conn.commit()
        if cursor.rowcount > 0:
            conn.close()
            return ok
        conn.close()
        return missing

    @tool
    def search_car_rentals(
        location: Optional[str] = None,
        name: Optional[str] = None,
        price_tier: Optional[str] = None,
        start_date: Optional[Union[datetime, date]] = None,
        end_date: Optional[Union[datetime, date]] = None,
    ) -> list[dict]:
        """Search for car rentals based on location, name, price tier, start date, and end date."""
        # For our tutorial, we will let you match on any dates and price tier.
        return _search("car_rentals", location, name)

    @tool
    def book_car_rental(rental_id: int) -> str:
        """Book a car rental by its ID."""
        return _set("UPDATE car_rentals SET booked = 1 WHERE id = ?", (rental_id,),
                    f"Car rental {rental_id} successfully booked.", f"No car rental found with ID {rental_id}.")

    @tool
    def update_car_rental(
        rental_id: int,
        start_date: Optional[Union[datetime, date]] = None,
        end_date: Optional[Union[datetime, date]] = None,
    ) -> str:
        """Update a car rental's start and end dates by its ID."""
        return _set("UPDATE car_rentals SET start_date = ?, end_date = ? WHERE id = ?",
                    (str(start_date), str(end_date), rental_id),
                    f"Car rental {rental_id} successfully updated.", f"No car rental found with ID {rental_id}.")

    @tool
    def cancel_car_rental(rental_id: int) -> str:
        """Cancel a car rental by its ID."""
        return _set("UPDATE car_rentals SET booked = 0 WHERE id = ?", (rental_id,),
                    f"Car rental {rental_id} successfully cancelled.", f"No car rental found with ID {rental_id}.")

    @tool
    def search_hotels(
        location: Optional[str] = None,
        name: Optional[str] = None,
        price_tier: Optional[str] = None,
        checkin_date: Optional[Union[datetime, date]] = None,
        checkout_date: Optional[Union[datetime, date]] = None,
    ) -> list[dict]:
        """Search for hotels based on location, name, price tier, check-in date, and check-out date."""
        return _search("hotels", location, name)

    @tool
    def book_hotel(hotel_id: int) -> str:
        """Book a hotel by its ID."""
        return _set("UPDATE hotels SET booked = 1 WHERE id = ?", (hotel_id,),
                    f"Hotel {hotel_id} successfully booked.", f"No hotel found with ID {hotel_id}.")

    @tool
    def cancel_hotel(hotel_id: int) -> str:
        """Cancel a hotel by its ID."""
        return _set("UPDATE hotels SET booked = 0 WHERE id = ?", (hotel_id,),
                    f"Hotel {hotel_id} successfully cancelled.", f"No hotel found with ID {hotel_id}.")

    @tool
    def search_trip_recommendations(
        location: Optional[str] = None,
        name: Optional[str] = None,
        keywords: Optional[str] = None,
    ) -> list[dict]:
        """Search for trip recommendations based on location, name, and keywords."""
        return _search("trip_recommendations", location, name, keywords)

    @tool
    def book_excursion(recommendation_id: int) -> str:
        """Book an excursion by its recommendation ID."""
        return _set("UPDATE trip_recommendations SET booked = 1 WHERE id = ?", (recommendation_id,),
                    f"Trip recommendation {recommendation_id} successfully booked.",
                    f"No trip recommendation found with ID {recommendation_id}.")

    return {t.name: t for t in [
        tavily_search_results_json, lookup_policy, fetch_user_flight_information, search_flights,
        update_ticket_to_new_flight, cancel_ticket, search_car_rentals, book_car_rental, update_car_rental,
        cancel_car_rental, search_hotels, book_hotel, cancel_hotel, search_trip_recommendations, book_excursion]}


# cell 17: utilities


def handle_tool_error(state) -> dict:
    error = state.get("error")
    tool_calls = state["messages"][-1].tool_calls
    return {
        "messages": [
            ToolMessage(
                content=f"Error: {repr(error)}\n please fix your mistakes.",
                tool_call_id=tc["id"],
            )
            for tc in tool_calls
        ]
    }


def create_tool_node_with_fallback(tools: list) -> dict:
    return ToolNode(tools).with_fallbacks([RunnableLambda(handle_tool_error)], exception_key="error")


class Assistant:
    """Parts 2-4's assistant: re-prompts on an empty reply."""

    def __init__(self, runnable: Runnable):
        self.runnable = runnable

    def __call__(self, state, config: RunnableConfig):
        while True:
            result = self.runnable.invoke(state)
            # If the LLM happens to return an empty response, we will re-prompt it
            # for an actual response.
            if not result.tool_calls and (
                not result.content
                or isinstance(result.content, list)
                and not result.content[0].get("text")
            ):
                messages = state["messages"] + [("user", "Respond with a real output.")]
                state = {**state, "messages": messages}
            else:
                break
        return {"messages": result}


def _cfg(tid="1"):
    return {"configurable": {
        # The passenger_id is used in our flight tools to
        # fetch the user's flight information
        "passenger_id": PASSENGER,
        # Checkpoints are accessed by thread_id
        "thread_id": tid,
    }}


_SYSTEM = ("You are a helpful customer support assistant for Swiss Airlines. "
           " Use the provided tools to search for flights, company policies, and other information to assist the "
           "user's queries. "
           " When searching, be persistent. Expand your query bounds if the first search returns no results. "
           " If a search comes up empty, expand your search before giving up."
           "\n\nCurrent user:\n<User>\n{user_info}\n</User>"
           "\nCurrent time: {time}.")


def _deny(tool_call_id, user_input):
    return ToolMessage(
        tool_call_id=tool_call_id,
        content=f"API call denied by user. Reasoning: '{user_input}'. Continue assisting, accounting for the "
                "user's input.",
    )


def _tutorial_loop(graph, config, questions, answers, stream_mode="values"):
    """Cells 34/42/65: stream each question; while the graph is paused before a tool, ask the
    user: 'y' goes on with `invoke(None)`; anything else is answered, as the tutorial does, by
    a new input carrying a ToolMessage; `("update_state", why)` rejects the call by
    `update_state(..., as_node=<the paused node>)` and goes on with `invoke(None)`."""
    answers = iter(answers)
    out = []
    for question in questions:
        events = collect(lambda q=question: graph.stream({"messages": ("user", q)}, config, stream_mode=stream_mode))
        out.append(("asked", question, events))
        event = [e for e in events if not isinstance(stream_mode, list) or e[0] == "values"][-1]
        event = event[1] if isinstance(stream_mode, list) else event
        snapshot = graph.get_state(config)
        while snapshot.next:
            out.append(("paused", _summary(snapshot)))
            user_input = next(answers)
            if user_input == "y":
                # Just continue
                result = graph.invoke(None, config)
            elif isinstance(user_input, tuple):
                tool_call_id = snapshot.values["messages"][-1].tool_calls[0]["id"]
                as_node = {"as_node": snapshot.next[0]} if user_input[0] == "update_state" else {}
                out.append(("update_state", graph.update_state(
                    config, {"messages": [_deny(tool_call_id, user_input[1])]}, **as_node)))
                out.append(("after update", _summary(graph.get_state(config))))
                result = graph.invoke(None, config)
            else:
                # Satisfy the tool invocation by
                # providing instructions on the requested changes / change of mind
                result = graph.invoke(
                    {"messages": [_deny(event["messages"][-1].tool_calls[0]["id"], user_input)]}, config)
            out.append(("resumed", user_input, result["messages"][-1], result.get("dialog_state")))
            snapshot = graph.get_state(config)
    out.append(("final", _summary(graph.get_state(config))))
    return out


async def _atutorial_loop(graph, config, questions, answers, stream_mode="values"):
    """`_tutorial_loop` with astream / ainvoke / aget_state / aupdate_state."""
    answers = iter(answers)
    out = []
    for question in questions:
        events = await acollect(lambda q=question: graph.astream({"messages": ("user", q)}, config,
                                                                 stream_mode=stream_mode))
        out.append(("asked", question, events))
        event = [e for e in events if not isinstance(stream_mode, list) or e[0] == "values"][-1]
        event = event[1] if isinstance(stream_mode, list) else event
        snapshot = await graph.aget_state(config)
        while snapshot.next:
            out.append(("paused", _summary(snapshot)))
            user_input = next(answers)
            if user_input == "y":
                result = await graph.ainvoke(None, config)
            elif isinstance(user_input, tuple):
                tool_call_id = snapshot.values["messages"][-1].tool_calls[0]["id"]
                as_node = {"as_node": snapshot.next[0]} if user_input[0] == "update_state" else {}
                out.append(("update_state", await graph.aupdate_state(
                    config, {"messages": [_deny(tool_call_id, user_input[1])]}, **as_node)))
                out.append(("after update", _summary(await graph.aget_state(config))))
                result = await graph.ainvoke(None, config)
            else:
                result = await graph.ainvoke(
                    {"messages": [_deny(event["messages"][-1].tool_calls[0]["id"], user_input)]}, config)
            out.append(("resumed", user_input, result["messages"][-1], result.get("dialog_state")))
            snapshot = await graph.aget_state(config)
    out.append(("final", _summary(await graph.aget_state(config))))
    return out


# --- customer support part 1: zero-shot agent ---------------------------------------------------

_PART1_QUESTIONS = [
    "Hi there, what time is my flight?",
    "Am i allowed to update my flight to something sooner? I want to leave later today.",
    "Update my flight to sometime next week then",
    "The next available option is great",
    "what about lodging and transportation?",
]


def _part1_script():
    return [
        calls("a1", ("fetch_user_flight_information", {}, "c1")),
        say("Your flight LX0112 leaves CDG on 2099-04-30 at 09:00, seat 18E.", "a2"),
        calls("a3", ("lookup_policy", {"query": "rebooking to a sooner flight"}, "c2")),
        say("Sooner flights need a new ticket.", "a4"),
        calls("a5", ("search_flights", {"departure_airport": "CDG", "arrival_airport": "BSL"}, "c3")),
        say("LX0114 on 2099-05-07 is available.", "a6"),
        # the model picks a flight in the past, then a malformed one, then the right one
        calls("a7", ("update_ticket_to_new_flight", {"ticket_no": TICKET, "new_flight_id": 3}, "c4")),
        calls("a8", ("update_ticket_to_new_flight", {"ticket_no": TICKET, "new_flight_id": 4}, "c5")),
        calls("a9", ("update_ticket_to_new_flight", {"ticket_no": TICKET, "new_flight_id": 2}, "c6")),
        say("", "a10"),  # an empty reply: the assistant re-prompts
        say("Done: you are on LX0114.", "a11"),
        calls("a12", ("search_hotels", {"location": "Basel"}, "c7"),
              ("search_car_rentals", {"location": "Basel"}, "c8"),
              ("tavily_search_results_json", {"query": "Basel transport"}, "c9")),
        say("Hilton Basel or Hyatt; Europcar or Avis.", "a13"),
    ]


def _part1_graph(E, llm, tools, checkpointer):
    # cell 19
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], E.add_messages]

    # cell 21: part 1's assistant reads the passenger id from the config
    class Part1Assistant:
        def __init__(self, runnable: Runnable):
            self.runnable = runnable

        def __call__(self, state: State, config: RunnableConfig):
            while True:
                configuration = config.get("configurable", {})
                passenger_id = configuration.get("passenger_id", None)
                state = {**state, "user_info": passenger_id}
                result = self.runnable.invoke(state)
                # If the LLM happens to return an empty response, we will re-prompt it
                # for an actual response.
                if not result.tool_calls and (
                    not result.content
                    or isinstance(result.content, list)
                    and not result.content[0].get("text")
                ):
                    messages = state["messages"] + [("user", "Respond with a real output.")]
                    state = {**state, "messages": messages}
                else:
                    break
            return {"messages": result}

    primary_assistant_prompt = ChatPromptTemplate.from_messages(
        [("system", _SYSTEM), ("placeholder", "{messages}")]).partial(time=_now)
    part_1_tools = list(tools.values())
    part_1_assistant_runnable = primary_assistant_prompt | llm.bind_tools(part_1_tools)

    # cell 23
    builder = E.StateGraph(State)
    # Define nodes: these do the work
    builder.add_node("assistant", Part1Assistant(part_1_assistant_runnable))
    builder.add_node("tools", create_tool_node_with_fallback(part_1_tools))
    # Define edges: these determine how the control flow moves
    builder.add_edge(E.START, "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    return builder.compile(checkpointer=checkpointer)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part1_zero_shot_agent_with_tools(differential, kind, tmp_path):
    """Part 1: the whole toolbox on one ToolNode with an error fallback; the passenger id
    reaches the tools through the config; a past flight is refused, a malformed one raises
    into the fallback, an empty reply is re-prompted, three tools run in parallel. Values
    stream per question, final state, history, database and what the model saw."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part1_script())
        with saver(E, kind, tmp_path) as memory:
            part_1_graph = _part1_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part1")
            out = _tutorial_loop(part_1_graph, config, _PART1_QUESTIONS, [])
            hist = history(part_1_graph, config)
        result = out, hist, _dump(keep), llm.seen
        keep.close()
        return result

    ref = differential(scenario)
    assert ref[2]["ticket_flights"][1] == (TICKET, 2, "Economy")


# --- part 2: confirm before any tool ------------------------------------------------------------


def _part2_graph(E, llm, tools, checkpointer):
    # cell 29
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], E.add_messages]
        user_info: str

    assistant_prompt = ChatPromptTemplate.from_messages(
        [("system", _SYSTEM), ("placeholder", "{messages}")]).partial(time=_now)
    part_2_tools = list(tools.values())
    part_2_assistant_runnable = assistant_prompt | llm.bind_tools(part_2_tools)
    fetch_user_flight_information = tools["fetch_user_flight_information"]

    # cell 31
    builder = E.StateGraph(State)

    def user_info(state: State):
        return {"user_info": fetch_user_flight_information.invoke({})}

    # NEW: The fetch_user_info node runs first, meaning our assistant can see the user's flight information without
    # having to take an action
    builder.add_node("fetch_user_info", user_info)
    builder.add_edge(E.START, "fetch_user_info")
    builder.add_node("assistant", Assistant(part_2_assistant_runnable))
    builder.add_node("tools", create_tool_node_with_fallback(part_2_tools))
    builder.add_edge("fetch_user_info", "assistant")
    builder.add_conditional_edges("assistant", tools_condition)
    builder.add_edge("tools", "assistant")
    return builder.compile(
        checkpointer=checkpointer,
        # NEW: The graph will always halt before executing the "tools" node.
        # The user can approve or reject (or even alter the request) before
        # the assistant continues
        interrupt_before=["tools"],
    )


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part2_interrupt_before_tools_approve_and_deny(differential, kind, tmp_path):
    """Part 2: `fetch_user_info` first (the tool reads the config inside a node), then every
    tool call pauses. 'y' goes on with `invoke(None, config)`; a refusal comes back as the
    tutorial writes it — a new input with a ToolMessage answering the pending call (the paused
    task is dropped, the run starts over at `fetch_user_info`); another refusal by
    `update_state(..., as_node="tools")`, then `invoke(None)`."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(
            say("Your flight LX0112 leaves at 09:00.", "a1"),
            calls("a2", ("search_flights", {"arrival_airport": "BSL"}, "c1")),
            say("LX0114 next week works.", "a3"),
            calls("a4", ("update_ticket_to_new_flight", {"ticket_no": TICKET, "new_flight_id": 2}, "c2")),
            say("OK, I left your ticket as it is.", "a5"),
            calls("a6", ("cancel_ticket", {"ticket_no": TICKET}, "c3")),
            say("Understood, the ticket stays.", "a7"),
            calls("a8", ("update_ticket_to_new_flight", {"ticket_no": TICKET, "new_flight_id": 2}, "c4")),
            say("You are on LX0114.", "a9"),
            calls("a10", ("cancel_ticket", {"ticket_no": TICKET}, "c5")),
            say("Kept it.", "a11"),
        )
        questions = ["Hi there, what time is my flight?", "Update my flight to sometime next week then",
                     "The next available option is great", "Actually cancel the ticket", "Fine, move it to LX0114",
                     "Cancel it after all", "No wait, did you cancel it?"]
        answers = ["y", "no, I'll call instead", ("update_state", "keep my ticket"), "y",
                   ("update_state_bare", "I changed my mind")]
        with saver(E, kind, tmp_path) as memory:
            part_2_graph = _part2_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part2")
            out = _tutorial_loop(part_2_graph, config, questions, answers)
            hist = history(part_2_graph, config)
        result = out, hist, _dump(keep), llm.seen
        keep.close()
        return result

    ref = differential(scenario)
    assert ref[2]["ticket_flights"][1] == (TICKET, 2, "Economy")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part2_without_a_passenger_id_fails_in_fetch_user_info(differential, kind, tmp_path):
    """A config without `passenger_id`: the tool called inside `fetch_user_info` raises, the
    run fails with the tool's ValueError, the thread keeps the failed task (its error in
    `get_state(...).tasks`); `invoke(None)` with the id in the config retries it and the
    conversation goes on."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(say("Your flight LX0112 leaves at 09:00.", "a1"))
        with saver(E, kind, tmp_path) as memory:
            part_2_graph = _part2_graph(E, llm, _travel_tools(db), memory)
            anonymous = {"configurable": {"thread_id": "anon"}}
            out = [collect(lambda: part_2_graph.stream({"messages": ("user", "what time is my flight?")}, anonymous,
                                                       stream_mode="updates"))]
            out.append(snapshot_summary(part_2_graph.get_state(anonymous), errors=True))
            config = {"configurable": {"thread_id": "anon", "passenger_id": PASSENGER}}
            out.append(collect(lambda: part_2_graph.stream(None, config, stream_mode="updates")))
            out.append(history(part_2_graph, config))
        keep.close()
        return out

    ref = differential(scenario)
    assert ref[0][-1] == ("raises", "ValueError", "No passenger ID configured.")


# --- part 3: confirm only sensitive tools -------------------------------------------------------

_SAFE = ["tavily_search_results_json", "fetch_user_flight_information", "search_flights", "lookup_policy",
         "search_car_rentals", "search_hotels", "search_trip_recommendations"]
_SENSITIVE = ["update_ticket_to_new_flight", "cancel_ticket", "book_car_rental", "update_car_rental",
              "cancel_car_rental", "book_hotel", "cancel_hotel", "book_excursion"]


def _part3_graph(E, llm, tools, checkpointer):
    # cell 37
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], E.add_messages]
        user_info: str

    assistant_prompt = ChatPromptTemplate.from_messages(
        [("system", _SYSTEM), ("placeholder", "{messages}")]).partial(time=_now)
    # "Read"-only tools (such as retrievers) don't need a user confirmation to use
    part_3_safe_tools = [tools[n] for n in _SAFE]
    # These tools all change the user's reservations.
    # The user has the right to control what decisions are made
    part_3_sensitive_tools = [tools[n] for n in _SENSITIVE]
    sensitive_tool_names = {t.name for t in part_3_sensitive_tools}
    # Our LLM doesn't have to know which nodes it has to route to. In its 'mind', it's just invoking functions.
    part_3_assistant_runnable = assistant_prompt | llm.bind_tools(part_3_safe_tools + part_3_sensitive_tools)
    fetch_user_flight_information = tools["fetch_user_flight_information"]

    # cell 39
    builder = E.StateGraph(State)

    def user_info(state: State):
        return {"user_info": fetch_user_flight_information.invoke({})}

    builder.add_node("fetch_user_info", user_info)
    builder.add_edge(E.START, "fetch_user_info")
    builder.add_node("assistant", Assistant(part_3_assistant_runnable))
    builder.add_node("safe_tools", create_tool_node_with_fallback(part_3_safe_tools))
    builder.add_node("sensitive_tools", create_tool_node_with_fallback(part_3_sensitive_tools))
    # Define logic
    builder.add_edge("fetch_user_info", "assistant")

    def route_tools(state: State):
        next_node = tools_condition(state)
        # If no tools are invoked, return to the user
        if next_node == E.END:
            return E.END
        ai_message = state["messages"][-1]
        # This assumes single tool calls. To handle parallel tool calling, you'd want to
        # use an ANY condition
        first_tool_call = ai_message.tool_calls[0]
        if first_tool_call["name"] in sensitive_tool_names:
            return "sensitive_tools"
        return "safe_tools"

    builder.add_conditional_edges("assistant", route_tools, ["safe_tools", "sensitive_tools", E.END])
    builder.add_edge("safe_tools", "assistant")
    builder.add_edge("sensitive_tools", "assistant")
    return builder.compile(checkpointer=checkpointer, interrupt_before=["sensitive_tools"])


def _part3_script():
    return [
        calls("a1", ("search_hotels", {"location": "Basel"}, "c1")),
        say("Hilton Basel and Hyatt Regency Basel are available.", "a2"),
        calls("a3", ("book_hotel", {"hotel_id": 2}, "c2")),
        say("The Hyatt is booked.", "a4"),
        calls("a5", ("search_car_rentals", {"location": "Basel"}, "c3")),
        calls("a6", ("book_car_rental", {"rental_id": 1}, "c4")),
        say("No car then.", "a7"),
        calls("a8", ("search_trip_recommendations", {"location": "Basel", "keywords": "museum, art"}, "c5")),
        calls("a9", ("book_excursion", {"recommendation_id": 2}, "c6")),
        say("Kunstmuseum Basel is booked.", "a10"),
    ]


_PART3_QUESTIONS = ["what about lodging?", "yes go ahead and book the Hyatt.",
                    "Now a car, the cheapest. Go ahead and book it.",
                    "interesting - i like the museums, pick one and book it."]
_PART3_ANSWERS = ["y", "no, I'll take the train", ("update_state", "not today")]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part3_sensitive_tools_pause_safe_tools_run(differential, kind, tmp_path):
    """Part 3: `route_tools` sends the first call's tool to `safe_tools` (runs at once) or
    `sensitive_tools` (paused by `interrupt_before`); approve, deny by new input, deny by
    `update_state(as_node="sensitive_tools")`. Streams both `updates` and `values`."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part3_script())
        with saver(E, kind, tmp_path) as memory:
            part_3_graph = _part3_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part3")
            out = _tutorial_loop(part_3_graph, config, _PART3_QUESTIONS, [*_PART3_ANSWERS, "y"],
                                 stream_mode=["updates", "values"])
            hist = history(part_3_graph, config)
        result = out, hist, _dump(keep)
        keep.close()
        return result

    ref = differential(scenario)
    assert [r[4] for r in ref[2]["hotels"]] == ["2024-04-22", "2024-04-02"]


def _tokens(chunks):
    return [(type(m).__name__, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_call_chunks", [])],
             md["langgraph_node"], md["langgraph_step"]) for m, md in chunks]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_support_bot_part3_async_with_tokens(differential, kind, tmp_path):
    """Part 3 on `astream`/`ainvoke`/`aupdate_state`/`aget_state_history` with each engine's
    async saver; the questions also stream `messages` (the model's tokens by node)."""
    async def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part3_script())
        async with asaver(E, kind, tmp_path) as memory:
            part_3_graph = _part3_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part3a")
            out = await _atutorial_loop(part_3_graph, config, _PART3_QUESTIONS[:2], ["y"],
                                        stream_mode=["values", "updates"])
            toks = await acollect(lambda: part_3_graph.astream(
                {"messages": ("user", _PART3_QUESTIONS[2])}, config, stream_mode="messages"))
            out.append(_tokens(toks))
            out += await _atutorial_loop(part_3_graph, config, _PART3_QUESTIONS[3:], [("update_state", "no")])
            hist = await ahistory(part_3_graph, config)
        result = out, hist, _dump(keep)
        keep.close()
        return result

    differential(scenario)


# --- part 4: specialized workflows --------------------------------------------------------------


def update_dialog_stack(left: list[str], right: Optional[str]) -> list[str]:
    """Push or pop the state."""
    if right is None:
        return left
    if right == "pop":
        return left[:-1]
    return left + [right]


class CompleteOrEscalate(BaseModel):
    """A tool to mark the current task as completed and/or to escalate control of the dialog to the main assistant,
    who can re-route the dialog based on the user's needs."""

    cancel: bool = True
    reason: str


class ToFlightBookingAssistant(BaseModel):
    """Transfers work to a specialized assistant to handle flight updates and cancellations."""

    request: str = Field(
        description="Any necessary followup questions the update flight assistant should clarify before proceeding.")


class ToBookCarRental(BaseModel):
    """Transfers work to a specialized assistant to handle car rental bookings."""

    location: str = Field(description="The location where the user wants to rent a car.")
    start_date: str = Field(description="The start date of the car rental.")
    end_date: str = Field(description="The end date of the car rental.")
    request: str = Field(description="Any additional information or requests from the user regarding the car rental.")


class ToHotelBookingAssistant(BaseModel):
    """Transfer work to a specialized assistant to handle hotel bookings."""

    location: str = Field(description="The location where the user wants to book a hotel.")
    checkin_date: str = Field(description="The check-in date for the hotel.")
    checkout_date: str = Field(description="The check-out date for the hotel.")
    request: str = Field(
        description="Any additional information or requests from the user regarding the hotel booking.")


class ToBookExcursion(BaseModel):
    """Transfers work to a specialized assistant to handle trip recommendation and other excursion bookings."""

    location: str = Field(description="The location where the user wants to book a recommended trip.")
    request: str = Field(
        description="Any additional information or requests from the user regarding the trip recommendation.")


def _specialist_prompt(what):
    return ChatPromptTemplate.from_messages([
        ("system",
         f"You are a specialized assistant for handling {what}. "
         "If you need more information or the customer changes their mind, escalate the task back to the main "
         "assistant. Remember that a booking isn't completed until after the relevant tool has successfully been "
         "used.\n\nCurrent user flight information:\n<Flights>\n{user_info}\n</Flights>"
         "\nCurrent time: {time}."
         '\n\nIf the user needs help, and none of your tools are appropriate for it, then "CompleteOrEscalate" the '
         "dialog to the host assistant."),
        ("placeholder", "{messages}"),
    ]).partial(time=_now)


def _part4_graph(E, llm, tools, checkpointer):
    # cell 45
    class State(TypedDict):
        messages: Annotated[list[AnyMessage], E.add_messages]
        user_info: str
        dialog_state: Annotated[
            list[Literal["assistant", "update_flight", "book_car_rental", "book_hotel", "book_excursion"]],
            update_dialog_stack,
        ]

    # cell 48
    update_flight_safe_tools = [tools["search_flights"]]
    update_flight_sensitive_tools = [tools["update_ticket_to_new_flight"], tools["cancel_ticket"]]
    update_flight_tools = update_flight_safe_tools + update_flight_sensitive_tools
    update_flight_runnable = _specialist_prompt("flight updates") | llm.bind_tools(
        update_flight_tools + [CompleteOrEscalate])
    book_hotel_safe_tools = [tools["search_hotels"]]
    book_hotel_sensitive_tools = [tools["book_hotel"], tools["cancel_hotel"]]
    book_hotel_runnable = _specialist_prompt("hotel bookings") | llm.bind_tools(
        book_hotel_safe_tools + book_hotel_sensitive_tools + [CompleteOrEscalate])
    book_car_rental_safe_tools = [tools["search_car_rentals"]]
    book_car_rental_sensitive_tools = [tools["book_car_rental"], tools["update_car_rental"],
                                       tools["cancel_car_rental"]]
    book_car_rental_runnable = _specialist_prompt("car rental bookings") | llm.bind_tools(
        book_car_rental_safe_tools + book_car_rental_sensitive_tools + [CompleteOrEscalate])
    book_excursion_safe_tools = [tools["search_trip_recommendations"]]
    book_excursion_sensitive_tools = [tools["book_excursion"]]
    book_excursion_runnable = _specialist_prompt("trip recommendations") | llm.bind_tools(
        book_excursion_safe_tools + book_excursion_sensitive_tools + [CompleteOrEscalate])

    primary_assistant_prompt = ChatPromptTemplate.from_messages([
        ("system",
         "You are a helpful customer support assistant for Swiss Airlines. "
         "Your primary role is to search for flight information and company policies to answer customer queries. "
         "If a customer requests to update or cancel a flight, book a car rental, book a hotel, or get trip "
         "recommendations, delegate the task to the appropriate specialized assistant by invoking the "
         "corresponding tool."
         "\n\nCurrent user flight information:\n<Flights>\n{user_info}\n</Flights>"
         "\nCurrent time: {time}."),
        ("placeholder", "{messages}"),
    ]).partial(time=_now)
    primary_assistant_tools = [tools["tavily_search_results_json"], tools["search_flights"], tools["lookup_policy"]]
    assistant_runnable = primary_assistant_prompt | llm.bind_tools(
        primary_assistant_tools + [ToFlightBookingAssistant, ToBookCarRental, ToHotelBookingAssistant,
                                   ToBookExcursion])
    fetch_user_flight_information = tools["fetch_user_flight_information"]

    # cell 50
    def create_entry_node(assistant_name: str, new_dialog_state: str) -> Callable:
        def entry_node(state: State) -> dict:
            tool_call_id = state["messages"][-1].tool_calls[0]["id"]
            return {
                "messages": [
                    ToolMessage(
                        content=f"The assistant is now the {assistant_name}. Reflect on the above conversation "
                        "between the host assistant and the user."
                        f" The user's intent is unsatisfied. Use the provided tools to assist the user. Remember, "
                        f"you are {assistant_name},"
                        " and the booking, update, other other action is not complete until after you have "
                        "successfully invoked the appropriate tool."
                        " If the user changes their mind or needs help for other tasks, call the "
                        "CompleteOrEscalate function to let the primary host assistant take control."
                        " Do not mention who you are - just act as the proxy for the assistant.",
                        tool_call_id=tool_call_id,
                    )
                ],
                "dialog_state": new_dialog_state,
            }

        return entry_node

    # cell 52
    builder = E.StateGraph(State)

    def user_info(state: State):
        return {"user_info": fetch_user_flight_information.invoke({})}

    builder.add_node("fetch_user_info", user_info)
    builder.add_edge(E.START, "fetch_user_info")

    # cells 54-60: one specialized workflow per task, written out in the tutorial; the same
    # code here for each (name, entry title, runnable, safe tools, sensitive tools)
    def add_workflow(name, title, runnable, safe_tools, sensitive_tools):
        builder.add_node(f"enter_{name}", create_entry_node(title, name))
        builder.add_node(name, Assistant(runnable))
        builder.add_edge(f"enter_{name}", name)
        builder.add_node(f"{name}_sensitive_tools", create_tool_node_with_fallback(sensitive_tools))
        builder.add_node(f"{name}_safe_tools", create_tool_node_with_fallback(safe_tools))

        def route(state: State):
            route = tools_condition(state)
            if route == E.END:
                return E.END
            tool_calls = state["messages"][-1].tool_calls
            did_cancel = any(tc["name"] == CompleteOrEscalate.__name__ for tc in tool_calls)
            if did_cancel:
                return "leave_skill"
            safe_toolnames = [t.name for t in safe_tools]
            if all(tc["name"] in safe_toolnames for tc in tool_calls):
                return f"{name}_safe_tools"
            return f"{name}_sensitive_tools"

        route.__name__ = f"route_{name}"
        builder.add_edge(f"{name}_sensitive_tools", name)
        builder.add_edge(f"{name}_safe_tools", name)
        builder.add_conditional_edges(
            name, route, [f"{name}_sensitive_tools", f"{name}_safe_tools", "leave_skill", E.END])

    add_workflow("update_flight", "Flight Updates & Booking Assistant", update_flight_runnable,
                 update_flight_safe_tools, update_flight_sensitive_tools)

    # This node will be shared for exiting all specialized assistants
    def pop_dialog_state(state: State) -> dict:
        """Pop the dialog stack and return to the main assistant.

        This lets the full graph explicitly track the dialog flow and delegate control
        to specific sub-graphs.
        """
        messages = []
        if state["messages"][-1].tool_calls:
            # Note: Doesn't currently handle the edge case where the llm performs parallel tool calls
            messages.append(
                ToolMessage(
                    content="Resuming dialog with the host assistant. Please reflect on the past conversation and "
                    "assist the user as needed.",
                    tool_call_id=state["messages"][-1].tool_calls[0]["id"],
                )
            )
        return {
            "dialog_state": "pop",
            "messages": messages,
        }

    builder.add_node("leave_skill", pop_dialog_state)
    builder.add_edge("leave_skill", "primary_assistant")
    add_workflow("book_car_rental", "Car Rental Assistant", book_car_rental_runnable,
                 book_car_rental_safe_tools, book_car_rental_sensitive_tools)
    add_workflow("book_hotel", "Hotel Booking Assistant", book_hotel_runnable,
                 book_hotel_safe_tools, book_hotel_sensitive_tools)
    add_workflow("book_excursion", "Trip Recommendation Assistant", book_excursion_runnable,
                 book_excursion_safe_tools, book_excursion_sensitive_tools)

    # cell 62: primary assistant
    builder.add_node("primary_assistant", Assistant(assistant_runnable))
    builder.add_node("primary_assistant_tools", create_tool_node_with_fallback(primary_assistant_tools))

    def route_primary_assistant(state: State):
        route = tools_condition(state)
        if route == E.END:
            return E.END
        tool_calls = state["messages"][-1].tool_calls
        if tool_calls:
            if tool_calls[0]["name"] == ToFlightBookingAssistant.__name__:
                return "enter_update_flight"
            elif tool_calls[0]["name"] == ToBookCarRental.__name__:
                return "enter_book_car_rental"
            elif tool_calls[0]["name"] == ToHotelBookingAssistant.__name__:
                return "enter_book_hotel"
            elif tool_calls[0]["name"] == ToBookExcursion.__name__:
                return "enter_book_excursion"
            return "primary_assistant_tools"
        raise ValueError("Invalid route")

    # The assistant can route to one of the delegated assistants,
    # directly use a tool, or directly respond to the user
    builder.add_conditional_edges(
        "primary_assistant",
        route_primary_assistant,
        ["enter_update_flight", "enter_book_car_rental", "enter_book_hotel", "enter_book_excursion",
         "primary_assistant_tools", E.END],
    )
    builder.add_edge("primary_assistant_tools", "primary_assistant")

    # Each delegated workflow can directly respond to the user
    # When the user responds, we want to return to the currently active workflow
    def route_to_workflow(
        state: State,
    ) -> Literal["primary_assistant", "update_flight", "book_car_rental", "book_hotel", "book_excursion"]:
        """If we are in a delegated state, route directly to the appropriate assistant."""
        dialog_state = state.get("dialog_state")
        if not dialog_state:
            return "primary_assistant"
        return dialog_state[-1]

    builder.add_conditional_edges("fetch_user_info", route_to_workflow)

    # Compile graph
    return builder.compile(
        checkpointer=checkpointer,
        # Let the user approve or deny the use of sensitive tools
        interrupt_before=["update_flight_sensitive_tools", "book_car_rental_sensitive_tools",
                          "book_hotel_sensitive_tools", "book_excursion_sensitive_tools"],
    )


_PART4_QUESTIONS = [
    "Hi there, what time is my flight?",
    "Update my flight to sometime next week then",
    "The next available option is great",
    "what about a car? I'd like the cheapest one.",
    "Go ahead and book it for 7 days",
    "OK then a hotel, the Hyatt please",
    "Cool so now what recommendations do you have on excursions?",
]


def _part4_script():
    car = {"location": "Basel", "start_date": "2099-05-07", "end_date": "2099-05-14", "request": "cheapest"}
    return [
        calls("p1", ("lookup_policy", {"query": "flight departure"}, "c1")),
        say("Your flight LX0112 leaves at 09:00.", "p2"),
        calls("p3", ("ToFlightBookingAssistant", {"request": "move to next week"}, "c2")),
        calls("f1", ("search_flights", {"departure_airport": "CDG", "arrival_airport": "BSL"}, "c3")),
        say("LX0114 on 2099-05-07 is the next option. Shall I?", "f2"),
        calls("f3", ("update_ticket_to_new_flight", {"ticket_no": TICKET, "new_flight_id": 2}, "c4")),
        say("Your ticket is on LX0114.", "f4"),
        calls("f5", ("CompleteOrEscalate", {"cancel": True, "reason": "user wants a car"}, "c5")),
        calls("p4", ("ToBookCarRental", car, "c6")),
        calls("r1", ("search_car_rentals", {"location": "Basel"}, "c7")),
        say("Europcar is the cheapest.", "r2"),
        calls("r3", ("book_car_rental", {"rental_id": 1}, "c8")),
        say("I did not book the car.", "r4"),
        calls("r5", ("CompleteOrEscalate", {"cancel": False, "reason": "hotel requested"}, "c9")),
        calls("p5", ("ToHotelBookingAssistant", {"location": "Basel", "checkin_date": "2099-05-07",
                                                 "checkout_date": "2099-05-14", "request": "Hyatt"}, "c10")),
        calls("h1", ("book_hotel", {"hotel_id": 2}, "c11")),
        say("I left the hotel unbooked.", "h2"),
        calls("h3", ("CompleteOrEscalate", {"reason": "excursions"}, "c12")),
        calls("p6", ("ToBookExcursion", {"location": "Basel", "request": "museums"}, "c13")),
        calls("x1", ("search_trip_recommendations", {"location": "Basel", "keywords": "museum"}, "c14")),
        say("Kunstmuseum Basel is a fine choice.", "x2"),
    ]


_PART4_ANSWERS = ["y", "no, I'll walk", ("update_state", "changed my mind")]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part4_specialized_workflows(differential, kind, tmp_path):
    """Part 4: the `dialog_state` stack (custom reducer: push a name, "pop", None keeps);
    the primary assistant delegates through `To*` tool calls to entry nodes that answer the
    call with a ToolMessage and push; the next question goes straight back to the active
    workflow (`route_to_workflow` after `fetch_user_info`); `CompleteOrEscalate` leaves
    through `leave_skill` (pop) to the primary assistant; sensitive tools of every workflow
    pause: approved, denied by new input, denied by `update_state`. Values stream, snapshots,
    history, database."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part4_script())
        with saver(E, kind, tmp_path) as memory:
            part_4_graph = _part4_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part4")
            out = _tutorial_loop(part_4_graph, config, _PART4_QUESTIONS, _PART4_ANSWERS)
            hist = history(part_4_graph, config)
        result = out, hist, _dump(keep), llm.seen[-1]
        keep.close()
        return result

    ref = differential(scenario)
    final = ref[0][-1][1]["values"]
    assert final["dialog_state"] == ["book_excursion"]
    assert ref[2]["ticket_flights"][1] == (TICKET, 2, "Economy")


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_support_bot_part4_async_updates(differential, kind, tmp_path):
    """Part 4 on the async API (each engine's async saver), streaming `updates`."""
    async def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part4_script())
        async with asaver(E, kind, tmp_path) as memory:
            part_4_graph = _part4_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part4a")
            out = await _atutorial_loop(part_4_graph, config, _PART4_QUESTIONS, _PART4_ANSWERS,
                                        stream_mode=["updates", "values"])
            hist = await ahistory(part_4_graph, config)
        result = out, hist, _dump(keep)
        keep.close()
        return result

    differential(scenario)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part4_time_travel_to_the_car_booking_pause(differential, kind, tmp_path):
    """After the part 4 conversation, the user goes back in `get_state_history` to the pause
    before `book_car_rental_sensitive_tools` (denied at the time) and forks it twice: approves
    it with `invoke(None, <that checkpoint>)`, then denies it again with `update_state` on that
    checkpoint and `invoke(None, <the fork>)`. The forks' streams, the thread's head, the
    history and the database (the car booked by the first fork)."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part4_script(), say("Your Europcar is booked.", "z1"), say("Not booked, as you wish.", "z2"))
        with saver(E, kind, tmp_path) as memory:
            part_4_graph = _part4_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part4t")
            _tutorial_loop(part_4_graph, config, _PART4_QUESTIONS, _PART4_ANSWERS)
            to_replay = next(s for s in part_4_graph.get_state_history(config)
                             if s.next == ("book_car_rental_sensitive_tools",))
            out = [_summary(to_replay)]
            out.append(collect(lambda: part_4_graph.stream(None, to_replay.config, stream_mode="updates")))
            out.append(_summary(part_4_graph.get_state(config)))
            tool_call_id = to_replay.values["messages"][-1].tool_calls[0]["id"]
            fork = part_4_graph.update_state(to_replay.config, {"messages": [_deny(tool_call_id, "not now")]},
                                             as_node="book_car_rental_sensitive_tools")
            out.append(_summary(part_4_graph.get_state(fork)))
            out.append(collect(lambda: part_4_graph.stream(None, fork, stream_mode="values")))
            out.append(_summary(part_4_graph.get_state(config)))
            hist = history(part_4_graph, config)
        result = out, hist, _dump(keep)
        keep.close()
        return result

    ref = differential(scenario)
    assert ref[2]["car_rentals"][0][-1] == 1


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_support_bot_part1_async(differential, kind, tmp_path):
    """Part 1 on `astream` (values) / `aget_state` / `aget_state_history`, each engine's async
    saver; the tools read the passenger id from the config on the async path too."""
    async def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part1_script())
        async with asaver(E, kind, tmp_path) as memory:
            part_1_graph = _part1_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part1a")
            out = await _atutorial_loop(part_1_graph, config, _PART1_QUESTIONS, [])
            hist = await ahistory(part_1_graph, config)
        result = out, hist, _dump(keep)
        keep.close()
        return result

    differential(scenario)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part4_tasks_and_checkpoints_streams(differential, kind, tmp_path):
    """The first four part 4 questions (a delegation, a pause approved, an escalation that
    pops the stack and delegates again) streamed with `values`, `tasks` and `checkpoints`:
    every task start and result, every checkpoint's values, next tasks and metadata."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part4_script())
        with saver(E, kind, tmp_path) as memory:
            part_4_graph = _part4_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part4s")
            out = _tutorial_loop(part_4_graph, config, _PART4_QUESTIONS[:4], ["y"],
                                 stream_mode=["values", "tasks", "checkpoints"])
        keep.close()
        return out

    differential(scenario)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_support_bot_part4_dialog_stack_edited_by_update_state(differential, kind, tmp_path):
    """After the conversation the stack is edited by hand through its reducer: "pop" with no
    `as_node` (the last node that ran, `book_excursion`, re-routes on its text reply: nothing
    next), so the next question goes to the primary assistant; then a push of "book_hotel" as
    `fetch_user_info`, whose `route_to_workflow` makes `book_hotel` next, run by
    `invoke(None)`."""
    def scenario(E):
        db, keep = _travel_db()
        llm = _llm(*_part4_script(), say("Anything else for your trip?", "q1"), say("Which hotel?", "q2"))
        with saver(E, kind, tmp_path) as memory:
            part_4_graph = _part4_graph(E, llm, _travel_tools(db), memory)
            config = _cfg("part4d")
            _tutorial_loop(part_4_graph, config, _PART4_QUESTIONS, _PART4_ANSWERS)
            out = [part_4_graph.update_state(config, {"dialog_state": "pop"})]
            out.append(_summary(part_4_graph.get_state(config)))
            out += _tutorial_loop(part_4_graph, config, ["Thanks!"], [])
            out.append(part_4_graph.update_state(config, {"dialog_state": "book_hotel"}, as_node="fetch_user_info"))
            out.append(_summary(part_4_graph.get_state(config)))
            out.append(part_4_graph.invoke(None, config))
            out.append(history(part_4_graph, config)[:4])
        keep.close()
        return out

    ref = differential(scenario)
    assert ref[-2]["dialog_state"] == ["book_hotel"]


@pytest.mark.parametrize("first", ["langgraph", "engine"])
def test_support_bot_part4_thread_paused_on_one_engine_resumes_on_the_other(differential, first, tmp_path):
    """Part 4 on LangGraph's own `SqliteSaver` (a file): the thread is built up and paused
    before `update_flight_sensitive_tools` by one engine's graph, then read, approved with
    `invoke(None)` and carried on (a delegation, a denial by input, one by `update_state`) by
    the other engine's graph. On the reference both halves are LangGraph."""
    def scenario(E):
        from langgraph.checkpoint.sqlite import SqliteSaver

        LG = Engine("langgraph")
        engines = (LG, E) if first == "langgraph" else (E, LG)
        db, keep = _travel_db()
        llm = _llm(*_part4_script())
        tools = _travel_tools(db)
        config = _cfg("cross")
        with SqliteSaver.from_conn_string(str(tmp_path / f"{E.label}-cross.db")) as memory:
            before = _part4_graph(engines[0], llm, tools, memory)
            out = _tutorial_loop(before, config, _PART4_QUESTIONS[:2], [])
            out.append(collect(lambda: before.stream({"messages": ("user", _PART4_QUESTIONS[2])}, config,
                                                     stream_mode="values")))
            after = _part4_graph(engines[1], llm, tools, memory)
            out.append(_summary(after.get_state(config)))
            out.append(after.invoke(None, config))
            out += _tutorial_loop(after, config, _PART4_QUESTIONS[3:], _PART4_ANSWERS[1:])
            hist = history(after, config)
        result = out, hist, _dump(keep)
        keep.close()
        return result

    ref = differential(scenario)
    assert ref[0][4]["next"] == ("update_flight_sensitive_tools",)
    assert ref[2]["ticket_flights"][1] == (TICKET, 2, "Economy")


def test_tutorial_graphs_draw_the_same(differential):
    """The notebooks display `get_graph(xray=True)` of each graph: the mermaid text of parts
    1-4 (part 4's `route_to_workflow` drawn from its `Literal` return type), the simulation,
    the prompt generator and the code assistant."""
    def scenario(E):
        db, keep = _travel_db()
        tools = _travel_tools(db)
        llm = _llm()
        graphs = [_part1_graph(E, llm, tools, None), _part2_graph(E, llm, tools, E.InMemorySaver()),
                  _part3_graph(E, llm, tools, E.InMemorySaver()), _part4_graph(E, llm, tools, E.InMemorySaver()),
                  _simulation(E, llm, llm), _prompt_generator(E, llm, E.InMemorySaver()),
                  _code_assistant(E, llm, "reflect")]
        keep.close()
        return [g.get_graph(xray=True).draw_mermaid() for g in graphs]

    differential(scenario)


# --- chatbot simulation (agent-simulation-evaluation.ipynb) ----------------------------------------


def convert_message_to_dict(m):
    """langchain_community.adapters.openai.convert_message_to_dict, for the message types here."""
    role = {"human": "user", "ai": "assistant", "system": "system"}[m.type]
    return {"role": role, "content": m.content}


def _simulation(E, bot_llm, user_llm, checkpointer=None):
    # cell 5: the chat bot under test (openai.chat.completions -> a scripted model)
    def my_chat_bot(messages: List[dict]) -> dict:
        system_message = {"role": "system", "content": "You are a customer support agent for an airline."}
        messages = [system_message] + messages
        completion = bot_llm.invoke(messages)
        return {"role": "assistant", "content": completion.content}

    # cell 8
    system_prompt_template = """You are a customer of an airline company. \
You are interacting with a user who is a customer support person. \

{instructions}

When you are finished with the conversation, respond with a single word 'FINISHED'"""

    prompt = ChatPromptTemplate.from_messages(
        [("system", system_prompt_template), MessagesPlaceholder(variable_name="messages")])
    instructions = """Your name is Harrison. You are trying to get a refund for the trip you took to Alaska. \
You want them to give you ALL the money back. \
This trip happened 5 years ago."""
    prompt = prompt.partial(name="Harrison", instructions=instructions)
    simulated_user = prompt | user_llm

    # cell 12
    def chat_bot_node(state):
        messages = state["messages"]
        # Convert from LangChain format to the OpenAI format, which our chatbot function expects.
        messages = [convert_message_to_dict(m) for m in messages]
        # Call the chat bot
        chat_bot_response = my_chat_bot(messages)
        # Respond with an AI Message
        return {"messages": [AIMessage(content=chat_bot_response["content"])]}

    # cell 14
    def _swap_roles(messages):
        new_messages = []
        for m in messages:
            if isinstance(m, AIMessage):
                new_messages.append(HumanMessage(content=m.content))
            else:
                new_messages.append(AIMessage(content=m.content))
        return new_messages

    def simulated_user_node(state):
        messages = state["messages"]
        # Swap roles of messages
        new_messages = _swap_roles(messages)
        # Call the simulated user
        response = simulated_user.invoke({"messages": new_messages})
        # This response is an AI message - we need to flip this to be a human message
        return {"messages": [HumanMessage(content=response.content)]}

    # cell 16
    def should_continue(state):
        messages = state["messages"]
        if len(messages) > 6:
            return "end"
        elif messages[-1].content == "FINISHED":
            return "end"
        else:
            return "continue"

    # cell 18
    class State(TypedDict):
        messages: Annotated[list, E.add_messages]

    graph_builder = E.StateGraph(State)
    graph_builder.add_node("user", simulated_user_node)
    graph_builder.add_node("chat_bot", chat_bot_node)
    # Every response from  your chat bot will automatically go to the
    # simulated user
    graph_builder.add_edge("chat_bot", "user")
    graph_builder.add_conditional_edges(
        "user",
        should_continue,
        # If the finish criteria are met, we will stop the simulation,
        # otherwise, the virtual user's message will be sent to your chat bot
        {"end": E.END, "continue": "chat_bot"},
    )
    # The input will first go to your chat bot
    graph_builder.add_edge(E.START, "chat_bot")
    return graph_builder.compile(checkpointer=checkpointer)


def _talk(n_bot, user_lines):
    bot = _llm(*[say(f"Bot reply {i}: how can I help with your refund?", f"b{i}") for i in range(n_bot)])
    user = _llm(*[say(text, f"u{i}") for i, text in enumerate(user_lines)])
    return bot, user


def test_simulation_runs_until_the_user_says_finished(differential):
    """cell 20 as written (no checkpointer): the loop stops on 'FINISHED'; every update but
    END is printed; the simulated user sees the roles swapped."""
    def scenario(E):
        bot, user = _talk(3, ["I want a refund for Alaska.", "All of it, please.", "FINISHED"])
        simulation = _simulation(E, bot, user)
        printed = []
        for chunk in simulation.stream({"messages": []}):
            # Print out all events aside from the final end chunk
            if E.END not in chunk:
                printed.append(chunk)
        return printed, bot.seen, user.seen

    ref = differential(scenario)
    assert len(ref[0]) == 6


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_simulation_stops_on_message_count_with_a_saver(differential, kind, tmp_path):
    """The same simulation on a saver: a user who never finishes is cut after 8 messages by
    `should_continue`; updates and values streams, state and history."""
    def scenario(E):
        bot, user = _talk(8, [f"Still not happy ({i})." for i in range(8)])
        with saver(E, kind, tmp_path) as memory:
            simulation = _simulation(E, bot, user, memory)
            config = {"configurable": {"thread_id": "sim"}}
            chunks = collect(lambda: simulation.stream({"messages": []}, config, stream_mode=["updates", "values"]))
            state = _summary(simulation.get_state(config))
            hist = history(simulation, config)
        return chunks, state, hist, user.seen[-1]

    ref = differential(scenario)
    assert len(ref[1]["values"]["messages"]) == 8


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_simulation_async_streams_both_models_tokens(differential, kind, tmp_path):
    """The simulation on `astream` with `messages` and `updates`: the chat bot's model (called
    with OpenAI-style dicts inside `chat_bot`) and the simulated user's prompt | model both
    stream their tokens under their node; then `aget_state_history`."""
    async def scenario(E):
        bot, user = _talk(3, ["I want a refund for Alaska.", "All of it, please.", "FINISHED"])
        async with asaver(E, kind, tmp_path) as memory:
            simulation = _simulation(E, bot, user, memory)
            config = {"configurable": {"thread_id": "sim-a"}}
            chunks = await acollect(lambda: simulation.astream({"messages": []}, config,
                                                               stream_mode=["messages", "updates"]))
            out = [(mode, _tokens([c])[0] if mode == "messages" else c) for mode, c in chunks]
            hist = await ahistory(simulation, config)
        return out, hist

    differential(scenario)


# --- information gathering prompt generator (information-gather-prompting.ipynb) ------------------


class PromptInstructions(BaseModel):
    """Instructions on how to prompt the LLM."""

    objective: str
    variables: List[str]
    constraints: List[str]
    requirements: List[str]


def _prompt_generator(E, llm, checkpointer):
    # cell 8
    template = """Your job is to get information from a user about what type of prompt template they want to create.

You should get the following information from them:

- What the objective of the prompt is
- What variables will be passed into the prompt template
- Any constraints for what the output should NOT do
- Any requirements that the output MUST adhere to

If you are not able to discern this info, ask them to clarify! Do not attempt to wildly guess.

After you are able to discern all the information, call the relevant tool."""

    def get_messages_info(messages):
        return [SystemMessage(content=template)] + messages

    llm_with_tool = llm.bind_tools([PromptInstructions])

    def info_chain(state):
        messages = get_messages_info(state["messages"])
        response = llm_with_tool.invoke(messages)
        return {"messages": [response]}

    # cell 10
    prompt_system = """Based on the following requirements, write a good prompt template:

{reqs}"""

    # Function to get the messages for the prompt
    # Will only get messages AFTER the tool call
    def get_prompt_messages(messages: list):
        tool_call = None
        other_msgs = []
        for m in messages:
            if isinstance(m, AIMessage) and m.tool_calls:
                tool_call = m.tool_calls[0]["args"]
            elif isinstance(m, ToolMessage):
                continue
            elif tool_call is not None:
                other_msgs.append(m)
        return [SystemMessage(content=prompt_system.format(reqs=tool_call))] + other_msgs

    def prompt_gen_chain(state):
        messages = get_prompt_messages(state["messages"])
        response = llm.invoke(messages)
        return {"messages": [response]}

    # cell 12
    def get_state(state):
        messages = state["messages"]
        if isinstance(messages[-1], AIMessage) and messages[-1].tool_calls:
            return "add_tool_message"
        elif not isinstance(messages[-1], HumanMessage):
            return E.END
        return "info"

    # cell 14
    class State(TypedDict):
        messages: Annotated[list, E.add_messages]

    workflow = E.StateGraph(State)
    workflow.add_node("info", info_chain)
    workflow.add_node("prompt", prompt_gen_chain)

    @workflow.add_node
    def add_tool_message(state: State):
        return {
            "messages": [
                ToolMessage(
                    content="Prompt generated!",
                    tool_call_id=state["messages"][-1].tool_calls[0]["id"],
                )
            ]
        }

    workflow.add_conditional_edges("info", get_state, ["add_tool_message", "info", E.END])
    workflow.add_edge("add_tool_message", "prompt")
    workflow.add_edge("prompt", E.END)
    workflow.add_edge(E.START, "info")
    return workflow.compile(checkpointer=checkpointer)


_GATHER_REPLIES = [
    say("Hi! What is the objective of your prompt?", "i1"),
    say("What variables will the RAG prompt take?", "i2"),
    calls("i3", ("PromptInstructions", {"objective": "rag", "variables": ["question", "context"],
                                        "constraints": [], "requirements": []}, "t1")),
    say("Answer the {question} using only this {context}.", "g1"),
    say("Red it is. Anything else?", "i4"),
]
_GATHER_USER = ["hi!", "rag prompt", "1 rag, 2 none, 3 no, 4 no", "red", "q"]


def _gather_loop(graph, config):
    """cell 17: the chat loop with its cached answers, printing each update's last message."""
    out = []
    for user in _GATHER_USER:
        if user in {"q", "Q"}:
            out.append("AI: Byebye")
            break
        output = None
        printed = []
        for output in graph.stream({"messages": [HumanMessage(content=user)]}, config=config,
                                   stream_mode="updates"):
            last_message = next(iter(output.values()))["messages"][-1]
            printed.append(last_message.pretty_repr())
        out.append((user, printed, output and "prompt" in output))
    return out


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_prompt_generator_gathers_then_generates_on_the_tool_call(differential, kind, tmp_path):
    """The state machine: `info` until the model calls PromptInstructions, then a node answers
    the call with a ToolMessage and `prompt` writes the template from the messages after the
    call; a later turn starts at `info` again. Printed updates, state, history, prompts seen."""
    def scenario(E):
        llm = _llm(*_GATHER_REPLIES)
        with saver(E, kind, tmp_path) as memory:
            graph = _prompt_generator(E, llm, memory)
            config = {"configurable": {"thread_id": "gather"}}
            out = _gather_loop(graph, config)
            state = _summary(graph.get_state(config))
            hist = history(graph, config)
        return out, state, hist, llm.seen

    ref = differential(scenario)
    assert [done for _, _, done in ref[0][:4]] == [False, False, True, False]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_prompt_generator_async_streams_tokens_and_values(differential, kind, tmp_path):
    """The same conversation on `astream` with `messages` and `values` modes (the model's
    tokens, the ToolMessage a node adds), `aget_state` and `aget_state_history`."""
    async def scenario(E):
        llm = _llm(*_GATHER_REPLIES)
        async with asaver(E, kind, tmp_path) as memory:
            graph = _prompt_generator(E, llm, memory)
            config = {"configurable": {"thread_id": "gather-a"}}
            out = []
            for user in _GATHER_USER[:4]:
                chunks = await acollect(lambda u=user: graph.astream(
                    {"messages": [HumanMessage(content=u)]}, config, stream_mode=["messages", "values"]))
                out.append([(mode, _tokens([c])[0] if mode == "messages" else c) for mode, c in chunks])
            state = _summary(await graph.aget_state(config))
            hist = await ahistory(graph, config)
        return out, state, hist

    differential(scenario)


# --- code assistant (langgraph_code_assistant.ipynb) ------------------------------------------------


class code(BaseModel):  # noqa: N801 - the tutorial's name
    """Schema for code solutions to questions about LCEL."""

    prefix: str = Field(description="Description of the problem and approach")
    imports: str = Field(description="Code block import statements")
    code: str = Field(description="Code block not including import statements")


concatenated_content = "LCEL docs: RunnableLambda, RunnablePassthrough, the | operator."


def _code_assistant(E, llm, flag, checkpointer=None):
    # cell 9
    code_gen_prompt = ChatPromptTemplate.from_messages(
        [
            ("system", """You are a coding assistant with expertise in LCEL, LangChain expression language. \n
    Here is a full set of LCEL documentation:  \n ------- \n  {context} \n ------- \n Answer the user
    question based on the above provided documentation. Ensure any code you provide can be executed \n
    with all required imports and variables defined. Structure your answer with a description of the code solution. \n
    Then list the imports. And finally list the functioning code block. Here is the user question:"""),
            ("placeholder", "{messages}"),
        ]
    )
    code_gen_chain = code_gen_prompt | llm.with_structured_output(code)

    # cell 13
    class GraphState(TypedDict):
        """
        Represents the state of our graph.

        Attributes:
            error : Binary flag for control flow to indicate whether test error was tripped
            messages : With user question, error messages, reasoning
            generation : Code solution
            iterations : Number of tries
        """

        error: str
        messages: List
        generation: str
        iterations: int

    # cell 15
    ### Parameter
    # Max tries
    max_iterations = 3

    ### Nodes
    def generate(state: GraphState):
        """Generate a code solution"""
        # State
        messages = state["messages"]
        iterations = state["iterations"]
        error = state["error"]

        # We have been routed back to generation with an error
        if error == "yes":
            messages += [
                (
                    "user",
                    "Now, try again. Invoke the code tool to structure the output with a prefix, imports, and "
                    "code block:",
                )
            ]

        # Solution
        code_solution = code_gen_chain.invoke({"context": concatenated_content, "messages": messages})
        messages += [
            (
                "assistant",
                f"{code_solution.prefix} \n Imports: {code_solution.imports} \n Code: {code_solution.code}",
            )
        ]

        # Increment
        iterations = iterations + 1
        return {"generation": code_solution, "messages": messages, "iterations": iterations}

    def code_check(state: GraphState):
        """Check code"""
        # State
        messages = state["messages"]
        code_solution = state["generation"]
        iterations = state["iterations"]

        # Get solution components
        imports = code_solution.imports
        code = code_solution.code

        # Check imports
        try:
            exec(imports)
        except Exception as e:
            error_message = [("user", f"Your solution failed the import test: {e}")]
            messages += error_message
            return {"generation": code_solution, "messages": messages, "iterations": iterations, "error": "yes"}

        # Check execution
        try:
            exec(imports + "\n" + code)
        except Exception as e:
            error_message = [("user", f"Your solution failed the code execution test: {e}")]
            messages += error_message
            return {"generation": code_solution, "messages": messages, "iterations": iterations, "error": "yes"}

        # No errors
        return {"generation": code_solution, "messages": messages, "iterations": iterations, "error": "no"}

    def reflect(state: GraphState):
        """Reflect on errors"""
        # State
        messages = state["messages"]
        iterations = state["iterations"]
        code_solution = state["generation"]

        # Prompt reflection

        # Add reflection
        reflections = code_gen_chain.invoke({"context": concatenated_content, "messages": messages})
        messages += [("assistant", f"Here are reflections on the error: {reflections}")]
        return {"generation": code_solution, "messages": messages, "iterations": iterations}

    ### Edges
    def decide_to_finish(state: GraphState):
        """Determines whether to finish."""
        error = state["error"]
        iterations = state["iterations"]

        if error == "no" or iterations == max_iterations:
            return "end"
        else:
            if flag == "reflect":
                return "reflect"
            else:
                return "generate"

    # cell 16
    workflow = E.StateGraph(GraphState)

    # Define the nodes
    workflow.add_node("generate", generate)  # generation solution
    workflow.add_node("check_code", code_check)  # check code
    workflow.add_node("reflect", reflect)  # reflect

    # Build graph
    workflow.add_edge(E.START, "generate")
    workflow.add_edge("generate", "check_code")
    workflow.add_conditional_edges(
        "check_code",
        decide_to_finish,
        {"end": E.END, "reflect": "reflect", "generate": "generate"},
    )
    workflow.add_edge("reflect", "generate")
    return workflow.compile(checkpointer=checkpointer)


_BAD_IMPORT = code(prefix="Use a missing package", imports="import lcel_does_not_exist", code="chain = 1")
_BAD_CODE = code(prefix="Pipe a lambda", imports="from langchain_core.runnables import RunnableLambda",
                 code="chain = RunnableLambda(lambda x: x) | undefined_prompt")
_GOOD = code(prefix="Wrap the string", imports="from langchain_core.runnables import RunnableLambda",
             code="chain = RunnableLambda(lambda s: {'question': s})\nassert chain.invoke('hi') == {'question': 'hi'}")
_REFLECTION = code(prefix="Reflection: define the prompt first", imports="", code="")
_QUESTION = ("How can I directly pass a string to a runnable and use it to construct the input needed for my "
             "prompt?")


def _frozen(chunks):
    """Each chunk as the user saw it when it came (the program mutates its `messages` list
    in place afterwards)."""
    return [copy.deepcopy(c) for c in chunks]


@pytest.mark.parametrize("flag", ["do not reflect", "reflect"])
def test_code_assistant_retries_failed_checks_until_the_code_runs(differential, flag):
    """cells 15-17 as written (no checkpointer): a failing import and a failing execution go
    back (through `reflect` when flagged) to `generate`; the third solution runs. The result,
    and the `updates` stream as each chunk came."""
    def scenario(E):
        structured = [_BAD_IMPORT, _REFLECTION, _BAD_CODE, _REFLECTION, _GOOD]
        if flag != "reflect":
            structured = [_BAD_IMPORT, _BAD_CODE, _GOOD]
        llm = _llm(structured=structured)
        app = _code_assistant(E, llm, flag)
        solution = app.invoke({"messages": [("user", _QUESTION)], "iterations": 0, "error": ""})
        llm = _llm(structured=structured)
        app = _code_assistant(E, llm, flag)
        chunks = []
        for chunk in app.stream({"messages": [("user", _QUESTION)], "iterations": 0, "error": ""},
                                stream_mode="updates"):
            chunks.append(copy.deepcopy(chunk))
        return solution, chunks

    ref = differential(scenario)
    assert ref[0]["error"] == "no" and ref[0]["iterations"] == 3


def _without_messages(summary):
    """A saved snapshot of the code assistant without its `messages`: the nodes extend the
    state's list in place (`messages += [...]`), and LangGraph saves a step's checkpoint in the
    background, so whether a saved list already has the next node's additions varies from run
    to run on LangGraph itself. The final state and the streamed chunks keep them."""
    values = {k: v for k, v in summary["values"].items() if k != "messages"}
    tasks = [(name, path, interrupts, {k: v for k, v in result.items() if k != "messages"}
              if isinstance(result, dict) else result, state)
             for name, path, interrupts, result, state in summary["tasks"]]
    return {**summary, "values": values, "tasks": tasks}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_code_assistant_stops_at_max_iterations_on_a_saver(differential, kind, tmp_path):
    """Never-passing solutions stop at `max_iterations` (3) with `error == "yes"`; on a saver
    (lgnb's SQLite saver is told to load the `code` model: the schema types `generation` as
    str), values stream as each chunk came, state and history."""
    def scenario(E):
        llm = _llm(structured=[_BAD_IMPORT, _BAD_CODE, _BAD_IMPORT])
        with saver(E, kind, tmp_path, allow=[code]) as memory:
            app = _code_assistant(E, llm, "do not reflect", memory)
            config = {"configurable": {"thread_id": "code"}}
            chunks = []
            for chunk in app.stream({"messages": [("user", _QUESTION)], "iterations": 0, "error": ""}, config,
                                    stream_mode="values"):
                chunks.append(copy.deepcopy(chunk))
            state = _summary(app.get_state(config))
            hist = [_without_messages(_summary(s)) for s in app.get_state_history(config)]
        return chunks, state, hist

    ref = differential(scenario)
    assert ref[1]["values"]["iterations"] == 3 and ref[1]["values"]["error"] == "yes"


async def test_code_assistant_async_with_reflection(differential):
    """`ainvoke` and `astream` (values, each chunk as it came) of the reflecting assistant."""
    async def scenario(E):
        structured = [_BAD_IMPORT, _REFLECTION, _BAD_CODE, _REFLECTION, _GOOD]
        app = _code_assistant(E, _llm(structured=structured), "reflect")
        solution = await app.ainvoke({"messages": [("user", _QUESTION)], "iterations": 0, "error": ""})
        app = _code_assistant(E, _llm(structured=structured), "reflect")
        chunks = []
        async for chunk in app.astream({"messages": [("user", _QUESTION)], "iterations": 0, "error": ""},
                                       stream_mode="values"):
            chunks.append(copy.deepcopy(chunk))
        return solution, chunks

    ref = differential(scenario)
    assert ref[0]["iterations"] == 3


def test_code_assistant_in_place_list_is_the_one_the_user_passed_and_streamed(differential):
    """The nodes grow `state["messages"]` in place (`messages += [...]`) and return it: with no
    reducer the channel keeps that same list, so the list the user passed in, every `values`
    and `updates` chunk collected without copying, and the result are one list that ends with
    all 8 messages — as on LangGraph."""
    def scenario(E):
        def app():
            return _code_assistant(E, _llm(structured=[_BAD_IMPORT, _BAD_CODE, _GOOD]), "do not reflect")

        ms = [("user", _QUESTION)]
        values = list(app().stream({"messages": ms, "iterations": 0, "error": ""}, stream_mode="values"))
        updates = list(app().stream({"messages": [("user", _QUESTION)], "iterations": 0, "error": ""},
                                    stream_mode="updates"))
        mine = [("user", _QUESTION)]
        out = app().invoke({"messages": mine, "iterations": 0, "error": ""})
        return (len(ms), [len(c["messages"]) for c in values], all(c["messages"] is ms for c in values),
                [(n, len(u["messages"])) for c in updates for n, u in c.items()],
                len(mine), out["messages"] is mine, out["messages"])

    ref = differential(scenario)
    assert ref[0] == 8 and ref[2] is True
