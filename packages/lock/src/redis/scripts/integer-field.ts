/**
 * A Lua helper the fenced scripts share: `integerField(key, field)` returns the hash field as a number (0 when
 * absent), or nil and an error reply naming the key, the field and what it holds when that is not an integer
 * of at most 2^53 - 1 in magnitude. Lua compares doubles: past that, values and tokens would round, and a
 * string compared with a number is a script error that says nothing about the field.
 */
export const INTEGER_FIELD_LUA = `
local function integerField(key, field)
  local raw = redis.call('hget', key, field)
  if not raw then return 0 end
  local n = nil
  if string.match(raw, '^-?%d+$') and #raw <= 17 then n = tonumber(raw) end
  if n == nil or n > 9007199254740991 or n < -9007199254740991 then
    return nil, redis.error_reply('field "' .. field .. '" of ' .. key .. ' holds "' .. string.sub(raw, 1, 40) ..
      '", not an integer of at most 2^53 - 1: nothing was written (store an integer there, or name another field)')
  end
  return n
end`;
