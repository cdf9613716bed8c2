# protos/fieldnums.awk - named field numbers from a .proto, for the
# hand-written wire-level code (STYLE.md, "Protobuf in C"):
#
#   awk -f protos/fieldnums.awk protos/trace.proto >build/gen/trace_fields.h
#
# writes one `#define F_<Message>_<field> <number>` per field of every
# message, in the .proto's own names and order; a nested message is
# Outer_Inner (the package is left out). Members of a oneof are fields of
# the message; enum values, reserved numbers and options are not fields.
# Comments and string literals are honoured; statements may span lines or
# share one. POSIX awk (Debian's default is mawk).
#
# Loud on what it cannot read: a statement in a message that is neither a
# field nor reserved/option/extensions, unbalanced braces, two fields giving
# one name, or no field at all exit 1 with the reason on stderr, so a build
# never compiles against a header that silently lacks names.

function fail(msg) {
	printf "%s:%d: fieldnums: %s\n", FILENAME, stmt_line, msg >"/dev/stderr"
	failed = 1
	exit 1
}

# Collapse whitespace runs to one space and trim.
function norm(s) {
	gsub(/[ \t\r\n\f\v]+/, " ", s)
	sub(/^ /, "", s)
	sub(/ $/, "", s)
	return s
}

# The message name the scope stack is in: Outer_Inner...
function scope_name(   i, n) {
	n = ""
	for (i = 1; i <= depth; i++)
		if (kind[i] == "message")
			n = n (n == "" ? "" : "_") name[i]
	return n
}

function emit(field, num,   m, def) {
	if (num !~ /^[0-9]+$/ || num + 0 < 1 || num + 0 > 536870911)
		fail("field " field " has number " num ", not 1..2^29-1")
	m = scope_name()
	def = "F_" m "_" field
	if (def in seen)
		fail(def " defined twice (lines " seen[def] " and " stmt_line ")")
	seen[def] = stmt_line
	body[m] = body[m] "#define " def " " (num + 0) "\n"
	nfields++
}

# A statement ended by `;`.
function statement(s,   t, f, top) {
	s = norm(s)
	if (s == "")
		return
	top = depth ? kind[depth] : "file"
	if (top != "message" && top != "oneof")
		return # file level, enum values, services, option aggregates
	gsub(/\[[^]]*\]/, "", s) # field options: [packed = true], [deprecated = true]
	s = norm(s)
	gsub(/ *< */, "<", s)
	gsub(/ *> */, "> ", s)
	gsub(/ *, */, ",", s)
	s = norm(s)
	if (s ~ /^(reserved|option|extensions)( |$)/)
		return
	if (s ~ /^((optional|required|repeated) )?[A-Za-z_.][A-Za-z0-9_.]* [A-Za-z_][A-Za-z0-9_]* = [^ ]+$/ ||
	    s ~ /^map<[^>]*> [A-Za-z_][A-Za-z0-9_]* = [^ ]+$/) {
		f = split(s, t, " ")
		if (f == 5 || t[1] !~ /^(optional|required|repeated)$/) { # a label is no type
			emit(t[f - 2], t[f])
			return
		}
	}
	fail("cannot read \"" s "\" as a field of " scope_name())
}

# A block opened by `{`: its header says what it is.
function open_block(s,   t, n, k, b, m) {
	s = norm(s)
	gsub(/\[[^]]*\]/, "", s)
	s = norm(s)
	n = split(s, t, " ")
	k = "other" # service, rpc, extend, option aggregate: no fields of ours
	b = ""
	if (t[1] == "message" && n == 2) {
		k = "message"
		b = t[2]
	} else if (t[1] == "enum" && n == 2) {
		k = "enum"
	} else if (t[1] == "oneof" && n == 2) {
		if (!depth || (kind[depth] != "message"))
			fail("oneof " t[2] " outside a message")
		k = "oneof"
	} else if (n >= 4 && t[n - 3] == "group" && t[n - 1] == "=") {
		# proto2 group: a field named after the type, and a nested message
		if (!depth || (kind[depth] != "message" && kind[depth] != "oneof"))
			fail("group " t[n - 2] " outside a message")
		emit(tolower(t[n - 2]), t[n])
		k = "message"
		b = t[n - 2]
	} else if (depth && (kind[depth] == "message" || kind[depth] == "oneof") &&
		   t[1] != "extend" && t[1] != "option") {
		fail("cannot read block \"" s "\" in " scope_name())
	}
	depth++
	kind[depth] = k
	name[depth] = b
	if (k == "message") { # one group per message, in the .proto's order
		m = scope_name()
		if (!(m in body)) {
			msgs[++nmsgs] = m
			body[m] = ""
		}
	}
}

{
	src = src $0 "\n"
}

END {
	if (failed)
		exit 1
	line = 1
	stmt_line = 1
	n = length(src)
	cur = ""
	mode = "" # "", "line" comment, "block" comment, or the quote char
	for (i = 1; i <= n; i++) {
		c = substr(src, i, 1)
		if (c == "\n")
			line++
		if (mode == "line") {
			if (c == "\n") {
				mode = ""
				cur = cur " "
			}
			continue
		}
		if (mode == "block") {
			if (c == "*" && substr(src, i + 1, 1) == "/") {
				mode = ""
				i++
				cur = cur " "
			}
			continue
		}
		if (mode != "") { # inside a string literal
			cur = cur c
			if (c == "\\") {
				cur = cur substr(src, i + 1, 1)
				i++
			} else if (c == mode) {
				mode = ""
			}
			continue
		}
		if (c == "/" && substr(src, i + 1, 1) == "/") {
			mode = "line"
			i++
			continue
		}
		if (c == "/" && substr(src, i + 1, 1) == "*") {
			mode = "block"
			i++
			continue
		}
		if (c == "\"" || c == "'") {
			mode = c
			cur = cur c
			continue
		}
		if (c == ";") {
			statement(cur)
			cur = ""
			stmt_line = line
			continue
		}
		if (c == "{") {
			open_block(cur)
			cur = ""
			stmt_line = line
			continue
		}
		if (c == "}") {
			if (norm(cur) != "")
				statement(cur)
			if (!depth)
				fail("unbalanced }")
			depth--
			cur = ""
			stmt_line = line
			continue
		}
		if (norm(cur) == "" && c !~ /[ \t\r\n]/)
			stmt_line = line # where the next statement starts
		cur = cur c
	}
	if (mode == "block")
		fail("unterminated /* comment")
	if (mode != "" && mode != "line")
		fail("unterminated string")
	if (depth)
		fail("unbalanced {: " depth " block(s) still open at the end")
	if (norm(cur) != "")
		fail("text after the last statement: " norm(cur))
	if (!nfields)
		fail("no message fields found")

	file = FILENAME
	base = file
	sub(/^.*\//, "", base)
	sub(/\.proto$/, "", base)
	guard = "TM_GEN_" toupper(base) "_FIELDS_H"
	gsub(/[^A-Z0-9_]/, "_", guard)
	print "/* " base "_fields.h - generated by protos/fieldnums.awk from " file "."
	print " * Do not edit: the build regenerates it when the .proto changes."
	print " *"
	print " * Every field number of " file " by name, F_<Message>_<field> (nested"
	print " * messages as Outer_Inner), for the hand-written wire-level code: the"
	print " * schema, not a bare number, says what a field is (STYLE.md, \"Protobuf"
	print " * in C\"). " nfields " names. */"
	print "#ifndef " guard
	print "#define " guard
	for (k = 1; k <= nmsgs; k++)
		if (body[msgs[k]] != "")
			printf "\n/* %s */\n%s", msgs[k], body[msgs[k]]
	print ""
	print "#endif"
}
