SELECT 1 -- comment
; DROP TABLE orders